package sim

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
)

// InteractionRequest is POST /_sim/interactions: a member runs a slash
// command, clicks a button, picks select values or submits a modal.
type InteractionRequest struct {
	GuildID    string   `json:"guild_id"`
	ChannelID  string   `json:"channel_id"`
	UserID     string   `json:"user_id"`
	Kind       string   `json:"kind"`
	Name       string   `json:"name,omitempty"`
	Options    []any    `json:"options,omitempty"`
	CustomID   string   `json:"custom_id,omitempty"`
	Values     []string `json:"values,omitempty"`
	MessageID  string   `json:"message_id,omitempty"`
	Components []any    `json:"components,omitempty"`
	// ComponentType overrides the clicked component's type; the default is
	// 2 (button), or 3 (string select) when values are given.
	ComponentType int    `json:"component_type,omitempty"`
	Locale        string `json:"locale,omitempty"`
}

// InteractionCreated is the 201 answer of POST /_sim/interactions.
type InteractionCreated struct {
	ID    string `json:"id"`
	Token string `json:"token"`
}

// InteractionStatus is GET /_sim/interactions/{id}.
type InteractionStatus struct {
	Acked        bool     `json:"acked"`
	AckType      int      `json:"ack_type"`
	AckLatencyMS *float64 `json:"ack_latency_ms"`
	Followups    int      `json:"followups"`
}

// Interact creates an interaction and delivers INTERACTION_CREATE to the
// connected gateway sessions. Its 3-second deadline starts now.
func (s *Server) Interact(req InteractionRequest) (InteractionCreated, error) {
	var out InteractionCreated
	err := s.mutate(func(rq *request) error {
		in, err := s.newInteraction(rq, req)
		if err != nil {
			return err
		}
		out = InteractionCreated{ID: in.id, Token: in.token}
		rq.emit(in.guildID, "INTERACTION_CREATE", in.payload)
		return nil
	})
	return out, err
}

func (s *Server) newInteraction(rq *request, req InteractionRequest) (*interaction, error) {
	g, ok := s.st.guilds[req.GuildID]
	if !ok {
		return nil, errors.New("sim: unknown guild")
	}
	c, ok := s.st.channels[req.ChannelID]
	if !ok || c.guildID != g.id {
		return nil, errors.New("sim: unknown channel in that guild")
	}
	m, ok := g.members[req.UserID]
	if !ok {
		return nil, errors.New("sim: user is not a member of the guild")
	}
	in := &interaction{
		id: s.st.ids.next(rq.now), token: "sim-interaction-" + newToken(), kind: req.Kind,
		guildID: g.id, channelID: c.id, userID: m.userID, createdAt: rq.now,
	}
	var data map[string]any
	switch req.Kind {
	case kindCommand:
		if req.Name == "" {
			return nil, errors.New("sim: a command interaction needs a name")
		}
		data = map[string]any{"id": s.commandID(g, req.Name, rq), "name": req.Name, "type": 1, "guild_id": g.id}
		if len(req.Options) > 0 {
			data["options"] = req.Options
		}
	case kindComponent:
		if req.CustomID == "" || req.MessageID == "" {
			return nil, errors.New("sim: a component interaction needs custom_id and message_id")
		}
		if msg, ok := s.st.messages[req.MessageID]; !ok || msg.channelID != c.id {
			return nil, errors.New("sim: unknown message in that channel")
		}
		in.messageID = req.MessageID
		ctype := req.ComponentType
		if ctype == 0 {
			ctype = 2
			if req.Values != nil {
				ctype = 3
			}
		}
		data = map[string]any{"custom_id": req.CustomID, "component_type": ctype}
		if ctype != 2 {
			values := req.Values
			if values == nil {
				values = []string{}
			}
			data["values"] = values
		}
	case kindModal:
		if req.CustomID == "" {
			return nil, errors.New("sim: a modal interaction needs custom_id")
		}
		comps := req.Components
		if comps == nil {
			comps = []any{}
		}
		data = map[string]any{"custom_id": req.CustomID, "components": comps}
		if req.MessageID != "" {
			if _, ok := s.st.messages[req.MessageID]; !ok {
				return nil, errors.New("sim: unknown message")
			}
			in.messageID = req.MessageID
		}
	default:
		return nil, fmt.Errorf("sim: kind %q: want command, component or modal", req.Kind)
	}
	locale := req.Locale
	if locale == "" {
		locale = "en-US"
	}
	bot := s.st.botMember(g)
	memberJSON := s.st.renderMember(m)
	memberJSON["permissions"] = strconv.FormatUint(s.st.channelPermissions(g, m, c), 10)
	in.payload = map[string]any{
		"id": in.id, "application_id": s.st.botID, "type": interactionType(req.Kind),
		"data": data, "guild_id": g.id, "channel_id": c.id, "channel": s.st.renderChannel(c),
		"member": memberJSON, "token": in.token, "version": 1, "locale": locale,
		"guild_locale": "en-US", "entitlements": []any{},
		"app_permissions":                strconv.FormatUint(s.st.channelPermissions(g, bot, c), 10),
		"authorizing_integration_owners": map[string]any{"0": g.id},
		"context":                        0,
		"attachment_size_limit":          maxBody,
	}
	if in.messageID != "" {
		in.payload["message"] = s.st.renderMessage(s.st.messages[in.messageID])
	}
	s.st.interactions[in.id] = in
	return in, nil
}

// commandID is the id of the registered command of that name, or a fresh
// one when the command was never registered.
func (s *Server) commandID(g *guild, name string, rq *request) string {
	for _, list := range [][]*command{g.commands, s.st.globalCmds} {
		for _, c := range list {
			if c.name == name {
				return c.id
			}
		}
	}
	return s.st.ids.next(rq.now)
}

// Interaction reports whether and how an interaction was acknowledged.
func (s *Server) Interaction(id string) (InteractionStatus, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	in, ok := s.st.interactions[id]
	if !ok {
		return InteractionStatus{}, false
	}
	st := InteractionStatus{Acked: in.acked, AckType: in.ackType, Followups: len(in.followups)}
	if in.acked {
		st.AckLatencyMS = ptr(ms(in.ackLatency))
	}
	return st, true
}

func (s *Server) ctlInteract(w http.ResponseWriter, r *http.Request) {
	var req InteractionRequest
	if !decodeControl(w, r, &req) {
		return
	}
	out, err := s.Interact(req)
	if err != nil {
		ctlError(w, http.StatusBadRequest, err)
		return
	}
	writeJSON(w, http.StatusCreated, out)
}

func (s *Server) ctlInteraction(w http.ResponseWriter, r *http.Request) {
	st, ok := s.Interaction(r.PathValue("id"))
	if !ok {
		ctlError(w, http.StatusNotFound, errors.New("sim: unknown interaction"))
		return
	}
	writeJSON(w, http.StatusOK, st)
}
