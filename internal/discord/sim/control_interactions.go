package sim

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
)

// InteractionRequest is POST /_sim/interactions: a member runs a slash
// command, types into an autocomplete option, clicks a button, picks
// select values or submits a modal.
type InteractionRequest struct {
	GuildID   string `json:"guild_id"`
	ChannelID string `json:"channel_id"`
	UserID    string `json:"user_id"`
	// Kind is "command", "autocomplete", "component" or "modal".
	Kind string `json:"kind"`
	Name string `json:"name,omitempty"`
	// Options are the command's options as Discord sends them ({name,
	// type, value}, nested under subcommands and groups). The users,
	// members, channels, roles and attachments that USER, CHANNEL, ROLE,
	// MENTIONABLE and ATTACHMENT options name are added to data.resolved;
	// an ATTACHMENT option's value is a filename (see Attachments), which
	// the interaction carries as the attachment's id.
	Options []any `json:"options,omitempty"`
	// Focused names the option an autocomplete interaction is for; it is
	// sent with "focused": true. An option may also carry focused itself.
	Focused string `json:"focused,omitempty"`
	// Attachments describe the files ATTACHMENT options name by filename;
	// a filename not listed here is a file of zero bytes.
	Attachments []InteractionAttachment `json:"attachments,omitempty"`
	CustomID    string                  `json:"custom_id,omitempty"`
	// Values are the picked select values; for user, role, mentionable and
	// channel selects (component types 5–8) they are ids, resolved into
	// data.resolved.
	Values     []string `json:"values,omitempty"`
	MessageID  string   `json:"message_id,omitempty"`
	Components []any    `json:"components,omitempty"`
	// ComponentType overrides the clicked component's type; the default is
	// 2 (button), or 3 (string select) when values are given.
	ComponentType int    `json:"component_type,omitempty"`
	Locale        string `json:"locale,omitempty"`
}

// InteractionAttachment is a file a member attached to an ATTACHMENT
// option.
type InteractionAttachment struct {
	Filename    string `json:"filename"`
	ContentType string `json:"content_type,omitempty"`
	Size        int    `json:"size,omitempty"`
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
	// AckContent is the content the initial response carried (a message
	// or a message update): what the member read first, whatever edits
	// followed.
	AckContent string `json:"ack_content,omitempty"`
	Followups  int    `json:"followups"`
	// Original is the response message as Discord would return it for
	// @original, once there is one: read here, it spends none of the
	// interaction webhook's rate limit, which the bot shares.
	Original map[string]any `json:"original,omitempty"`
	// Choices are what an autocomplete interaction was answered with.
	Choices []Choice `json:"choices,omitempty"`
	// Modal is the data of the modal the interaction was answered with.
	Modal json.RawMessage `json:"modal,omitempty"`
	// AnsweredVia says how the initial response came: "callback" (POST
	// /interactions/{id}/{token}/callback) or "response" (the body of the
	// Interactions Endpoint URL's HTTP response).
	AnsweredVia string `json:"answered_via,omitempty"`
	// DeliveryError is why the endpoint's answer was not taken — none in
	// time, an HTTP status other than 200, an invalid body — when the
	// interaction was POSTed to an Interactions Endpoint URL.
	DeliveryError string `json:"delivery_error,omitempty"`
}

// Choice is one choice of an autocomplete answer: the name the member
// sees and the value the command then carries.
type Choice struct {
	Name  string `json:"name"`
	Value any    `json:"value"`
}

// Interact creates an interaction and delivers it: as INTERACTION_CREATE
// to the connected gateway sessions or, when the application has an
// Interactions Endpoint URL, POSTed there in the background (see
// deliver). Its 3-second deadline starts now.
func (s *Server) Interact(req InteractionRequest) (InteractionCreated, error) {
	var out InteractionCreated
	var endpoint string
	var payload map[string]any
	err := s.mutate(func(rq *request) error {
		in, err := s.newInteraction(rq, req)
		if err != nil {
			return err
		}
		out = InteractionCreated{ID: in.id, Token: in.token}
		if s.endpoint == "" {
			rq.emit(in.guildID, "INTERACTION_CREATE", in.payload)
			return nil
		}
		// The payload is not changed once made: it is encoded outside
		// the lock, as the gateway's dispatch encodes it.
		endpoint, payload = s.endpoint, in.payload
		return nil
	})
	if err == nil && endpoint != "" {
		go s.deliver(endpoint, out, payload)
	}
	return out, err
}

func (s *Server) newInteraction(rq *request, req InteractionRequest) (*interaction, error) {
	g, ok := s.st.guilds[req.GuildID]
	if !ok {
		return nil, errors.New("sim: unknown guild")
	}
	if g.members[s.st.botID] == nil {
		return nil, errors.New("sim: the bot is not in that guild: Discord shows its commands nowhere there")
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
	res := s.newResolved(rq, g, c, m, req.Attachments)
	switch req.Kind {
	case kindCommand, kindAutocomplete:
		if req.Name == "" {
			return nil, errors.New("sim: a command interaction needs a name")
		}
		data = map[string]any{"id": s.commandID(g, req.Name, rq), "name": req.Name, "type": 1, "guild_id": g.id}
		opts, err := copyOptions(req.Options)
		if err != nil {
			return nil, err
		}
		focused, err := res.options(opts, req.Focused, req.Kind == kindCommand)
		if err != nil {
			return nil, err
		}
		if req.Kind == kindAutocomplete && !focused && !hasFocus(opts) {
			return nil, errors.New("sim: an autocomplete interaction needs a focused option")
		}
		if len(opts) > 0 {
			data["options"] = opts
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
			if err := res.values(ctype, values); err != nil {
				return nil, err
			}
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
		return nil, fmt.Errorf("sim: kind %q: want command, autocomplete, component or modal", req.Kind)
	}
	if r := res.data(); r != nil {
		data["resolved"] = r
	}
	locale := req.Locale
	if locale == "" {
		locale = "en-US"
	}
	bot := s.st.botMember(g)
	memberJSON := s.st.renderMember(m)
	memberJSON["permissions"] = strconv.FormatUint(s.st.memberPermissions(g, m, c, rq.now), 10)
	in.payload = map[string]any{
		"id": in.id, "application_id": s.st.appID, "type": interactionType(req.Kind),
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
	s.st.byToken[in.token] = in
	return in, nil
}

// copyOptions deep-copies options so that marking and rewriting them leaves
// the caller's values alone.
func copyOptions(opts []any) ([]any, error) {
	if len(opts) == 0 {
		return nil, nil
	}
	raw, err := json.Marshal(opts)
	if err != nil {
		return nil, fmt.Errorf("sim: options: %w", err)
	}
	var out []any
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("sim: options: %w", err)
	}
	return out, nil
}

// hasFocus reports whether some option, at any depth, is marked focused.
func hasFocus(opts []any) bool {
	for _, raw := range opts {
		o, _ := raw.(map[string]any)
		if f, _ := o["focused"].(bool); f {
			return true
		}
		if children, ok := o["options"].([]any); ok && hasFocus(children) {
			return true
		}
	}
	return false
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

// Unanswered returns the ids among ids not yet acknowledged, in order, an
// unknown id among them. It renders nothing and takes the world's lock
// once, so a load generator can poll it while answers still come in
// without taking the CPU and the lock from them, as Interaction would.
func (s *Server) Unanswered(ids []string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, id := range ids {
		if in, ok := s.st.interactions[id]; !ok || !in.acked {
			out = append(out, id)
		}
	}
	return out
}

// Interaction reports whether and how an interaction was acknowledged.
func (s *Server) Interaction(id string) (InteractionStatus, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	in, ok := s.st.interactions[id]
	if !ok {
		return InteractionStatus{}, false
	}
	st := InteractionStatus{Acked: in.acked, AckType: in.ackType, AckContent: in.ackContent, Followups: len(in.followups), Choices: in.choices,
		Modal: in.modal, AnsweredVia: in.via, DeliveryError: in.deliveryError}
	if in.acked {
		st.AckLatencyMS = ptr(ms(in.ackLatency))
	}
	if m, ok := s.st.messages[in.originalID]; ok {
		st.Original = s.st.renderMessage(m)
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
