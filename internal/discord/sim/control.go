package sim

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"
)

// controlMux serves the control API under /_sim/. Its JSON contract is
// relied on by outside checks: extend it, never change it.
func (s *Server) controlMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /_sim/guilds", s.ctlCreateGuild)
	mux.HandleFunc("GET /_sim/guilds/{id}", s.ctlGetGuild)
	mux.HandleFunc("POST /_sim/guilds/{id}/members", s.ctlAddMember)
	mux.HandleFunc("DELETE /_sim/guilds/{id}/members/{user_id}", s.ctlRemoveMember)
	mux.HandleFunc("DELETE /_sim/guilds/{id}/roles/{role_id}", s.ctlDeleteRole)
	mux.HandleFunc("PUT /_sim/guilds/{id}/members/{user_id}/roles/{role_id}", s.ctlMemberRole)
	mux.HandleFunc("DELETE /_sim/guilds/{id}/members/{user_id}/roles/{role_id}", s.ctlMemberRole)
	mux.HandleFunc("GET /_sim/channels/{id}/messages", s.ctlMessages)
	mux.HandleFunc("POST /_sim/channels/{id}/messages", s.ctlPostMessage)
	mux.HandleFunc("DELETE /_sim/channels/{id}", s.ctlDeleteChannel)
	mux.HandleFunc("POST /_sim/interactions", s.ctlInteract)
	mux.HandleFunc("GET /_sim/interactions/{id}", s.ctlInteraction)
	mux.HandleFunc("GET /_sim/requests", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, s.Requests())
	})
	mux.HandleFunc("GET /_sim/stats", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, s.Stats())
	})
	mux.HandleFunc("POST /_sim/faults", s.ctlFaults)
	mux.HandleFunc("DELETE /_sim/faults", func(w http.ResponseWriter, r *http.Request) {
		s.ClearFaults()
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("POST /_sim/limits", s.ctlLimits)
	mux.HandleFunc("POST /_sim/token", s.ctlToken)
	mux.HandleFunc("POST /_sim/application", s.ctlApplication)
	mux.HandleFunc("POST /_sim/oauth2/authorize", s.ctlAuthorize)
	mux.HandleFunc("PATCH /_sim/guilds/{id}/roles/{role_id}", s.ctlMoveRole)
	mux.HandleFunc("GET /_sim/gateway", s.ctlGateway)
	mux.HandleFunc("POST /_sim/gateway", s.ctlGateway)
	mux.HandleFunc("POST /_sim/reset", func(w http.ResponseWriter, r *http.Request) {
		s.Reset()
		w.WriteHeader(http.StatusNoContent)
	})
	return mux
}

func ctlError(w http.ResponseWriter, status int, err error) {
	writeJSON(w, status, map[string]string{"error": err.Error()})
}

// decodeControl reads a control body. Fields it does not know are
// ignored, so outside checks may send more than the contract names.
func decodeControl(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 8<<20))
	if err := dec.Decode(v); err != nil {
		ctlError(w, http.StatusBadRequest, fmt.Errorf("sim: bad control body: %w", err))
		return false
	}
	return true
}

// mutate runs fn under the lock with a request that collects gateway
// events, and dispatches them once the lock is released.
func (s *Server) mutate(fn func(rq *request) error) error {
	s.mu.Lock()
	rq := &request{now: s.clock.Now()}
	s.archiveIdle(rq)
	err := fn(rq)
	s.mu.Unlock()
	s.dispatch(rq.events)
	return err
}

// Reset empties the world and every counter, limit override and fault.
// The bot user keeps its id.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resetLocked()
}

func (s *Server) ctlCreateGuild(w http.ResponseWriter, r *http.Request) {
	var f Fixture
	if !decodeControl(w, r, &f) {
		return
	}
	res, err := s.LoadFixture(f)
	if err != nil {
		ctlError(w, http.StatusBadRequest, err)
		return
	}
	writeJSON(w, http.StatusCreated, res)
}

// GuildSnapshot is GET /_sim/guilds/{id}: the guild as a test inspects it.
type GuildSnapshot struct {
	ID       string           `json:"id"`
	Name     string           `json:"name"`
	OwnerID  string           `json:"owner_id"`
	Roles    []SnapshotRole   `json:"roles"`
	Members  []SnapshotMember `json:"members"`
	Channels []SnapshotChan   `json:"channels"`
	Threads  []SnapshotThread `json:"threads"`
}

type SnapshotRole struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Position    int    `json:"position"`
	Permissions string `json:"permissions"`
	Managed     bool   `json:"managed"`
}

type SnapshotMember struct {
	ID       string   `json:"id"`
	Username string   `json:"username"`
	Roles    []string `json:"roles"`
}

type SnapshotChan struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Type     int    `json:"type"`
	ParentID string `json:"parent_id"`
	Messages int    `json:"messages"`
}

type SnapshotThread struct {
	ID       string   `json:"id"`
	Name     string   `json:"name"`
	Type     int      `json:"type"`
	ParentID string   `json:"parent_id"`
	Archived bool     `json:"archived"`
	Locked   bool     `json:"locked"`
	Members  []string `json:"members"`
}

// Guild returns a snapshot of a guild; ok is false when it does not exist.
func (s *Server) Guild(id string) (GuildSnapshot, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.st.guilds[id]
	if !ok {
		return GuildSnapshot{}, false
	}
	snap := GuildSnapshot{ID: g.id, Name: g.name, OwnerID: g.ownerID, Roles: []SnapshotRole{}, Members: []SnapshotMember{}, Channels: []SnapshotChan{}, Threads: []SnapshotThread{}}
	for _, r := range g.sortedRoles() {
		snap.Roles = append(snap.Roles, SnapshotRole{ID: r.id, Name: r.name, Position: r.position, Permissions: fmt.Sprint(r.permissions), Managed: r.managed})
	}
	ids := make([]string, 0, len(g.members))
	for id := range g.members {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, compareSnowflakes)
	for _, id := range ids {
		snap.Members = append(snap.Members, SnapshotMember{ID: id, Username: s.st.users[id].username, Roles: append([]string{}, g.members[id].roles...)})
	}
	for _, id := range g.channels {
		c := s.st.channels[id]
		snap.Channels = append(snap.Channels, SnapshotChan{ID: c.id, Name: c.name, Type: c.typ, ParentID: c.parentID, Messages: len(c.messages)})
	}
	var threads []*channel
	for _, c := range s.st.channels {
		if c.guildID == g.id && c.isThread() {
			threads = append(threads, c)
		}
	}
	slices.SortFunc(threads, func(a, b *channel) int { return compareSnowflakes(a.id, b.id) })
	for _, t := range threads {
		members := []string{}
		for id := range t.threadMembers {
			members = append(members, id)
		}
		slices.SortFunc(members, compareSnowflakes)
		snap.Threads = append(snap.Threads, SnapshotThread{ID: t.id, Name: t.name, Type: t.typ, ParentID: t.parentID, Archived: t.archived, Locked: t.locked, Members: members})
	}
	return snap, true
}

func (s *Server) ctlGetGuild(w http.ResponseWriter, r *http.Request) {
	snap, ok := s.Guild(r.PathValue("id"))
	if !ok {
		ctlError(w, http.StatusNotFound, errors.New("sim: unknown guild"))
		return
	}
	writeJSON(w, http.StatusOK, snap)
}

// Messages returns a channel's messages oldest first, as Discord renders
// them; ok is false when the channel does not exist.
func (s *Server) Messages(channelID string) ([]map[string]any, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.st.channels[channelID]
	if !ok {
		return nil, false
	}
	out := make([]map[string]any, 0, len(c.messages))
	for _, m := range c.messages {
		out = append(out, s.st.renderMessage(m))
	}
	return out, true
}

func (s *Server) ctlMessages(w http.ResponseWriter, r *http.Request) {
	msgs, ok := s.Messages(r.PathValue("id"))
	if !ok {
		ctlError(w, http.StatusNotFound, errors.New("sim: unknown channel"))
		return
	}
	writeJSON(w, http.StatusOK, msgs)
}

// MemberMessage is POST /_sim/channels/{id}/messages: a member posts.
type MemberMessage struct {
	UserID  string `json:"user_id"`
	Content string `json:"content"`
}

func (s *Server) ctlPostMessage(w http.ResponseWriter, r *http.Request) {
	var body MemberMessage
	if !decodeControl(w, r, &body) {
		return
	}
	var out map[string]any
	err := s.mutate(func(rq *request) error {
		c, ok := s.st.channels[r.PathValue("id")]
		if !ok {
			return errors.New("sim: unknown channel")
		}
		if _, ok := s.st.guilds[c.guildID].members[body.UserID]; !ok {
			return errors.New("sim: user is not a member of the channel's guild")
		}
		m := &message{id: s.st.ids.next(rq.now), channelID: c.id, guildID: c.guildID, authorID: body.UserID, content: body.Content, timestamp: rq.now}
		out = s.postMessage(rq, c, m)
		return nil
	})
	if err != nil {
		ctlError(w, http.StatusBadRequest, err)
		return
	}
	writeJSON(w, http.StatusCreated, out)
}

func (s *Server) ctlDeleteChannel(w http.ResponseWriter, r *http.Request) {
	err := s.mutate(func(rq *request) error {
		c, ok := s.st.channels[r.PathValue("id")]
		if !ok {
			return errors.New("sim: unknown channel")
		}
		s.deleteChannelEmit(rq, c)
		return nil
	})
	if err != nil {
		ctlError(w, http.StatusNotFound, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// AddMember makes a new user join a guild with the named roles and
// raises GUILD_MEMBER_ADD.
func (s *Server) AddMember(guildID string, fm FixtureMember) (MemberName, error) {
	var out MemberName
	err := s.mutate(func(rq *request) error {
		g, ok := s.st.guilds[guildID]
		if !ok {
			return errors.New("sim: unknown guild")
		}
		if fm.Username == "" {
			return errors.New("sim: a member needs a username")
		}
		m := &member{joinedAt: rq.now}
		for _, name := range fm.Roles {
			var found *role
			for _, r := range g.roles {
				if r.name == name && r.id != g.id {
					found = r
				}
			}
			if found == nil {
				return fmt.Errorf("sim: unknown role %q", name)
			}
			m.roles = append(m.roles, found.id)
		}
		u := &user{id: s.st.ids.next(rq.now), username: fm.Username, dmsClosed: fm.DMsClosed}
		m.userID = u.id
		s.st.users[u.id] = u
		g.members[u.id] = m
		rq.emit(g.id, "GUILD_MEMBER_ADD", s.st.memberUpdate(g, m))
		out = MemberName{ID: u.id, Username: u.username}
		return nil
	})
	return out, err
}

func (s *Server) ctlAddMember(w http.ResponseWriter, r *http.Request) {
	var fm FixtureMember
	if !decodeControl(w, r, &fm) {
		return
	}
	m, err := s.AddMember(r.PathValue("id"), fm)
	if err != nil {
		ctlError(w, http.StatusBadRequest, err)
		return
	}
	writeJSON(w, http.StatusCreated, m)
}

func (s *Server) ctlRemoveMember(w http.ResponseWriter, r *http.Request) {
	err := s.mutate(func(rq *request) error {
		g, ok := s.st.guilds[r.PathValue("id")]
		if !ok {
			return errors.New("sim: unknown guild")
		}
		m, ok := g.members[r.PathValue("user_id")]
		if !ok || m.userID == s.st.botID {
			return errors.New("sim: unknown member")
		}
		s.st.removeMember(g, m)
		rq.emit(g.id, "GUILD_MEMBER_REMOVE", map[string]any{"guild_id": g.id, "user": s.st.renderUser(m.userID)})
		return nil
	})
	if err != nil {
		ctlError(w, http.StatusNotFound, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// SetMemberRole gives a member a role (has) or takes it away as the
// server owner does in Discord's client: above the bot's roles too, and
// to the bot itself. A change raises GUILD_MEMBER_UPDATE; roles managed
// by an integration are refused, as Discord refuses them to everyone.
func (s *Server) SetMemberRole(guildID, userID, roleID string, has bool) error {
	return s.mutate(func(rq *request) error {
		g, ok := s.st.guilds[guildID]
		if !ok {
			return errors.New("sim: unknown guild")
		}
		m, ok := g.members[userID]
		if !ok {
			return errors.New("sim: unknown member")
		}
		r, ok := g.roles[roleID]
		if !ok || r.id == g.id || r.managed {
			return errors.New("sim: unknown role, or one nobody can give")
		}
		if hasRole(m, r.id) == has {
			return nil
		}
		if has {
			m.roles = append(m.roles, r.id)
		} else {
			m.roles = slices.DeleteFunc(m.roles, func(id string) bool { return id == r.id })
		}
		rq.emit(g.id, "GUILD_MEMBER_UPDATE", s.st.memberUpdate(g, m))
		return nil
	})
}

func (s *Server) ctlMemberRole(w http.ResponseWriter, r *http.Request) {
	if err := s.SetMemberRole(r.PathValue("id"), r.PathValue("user_id"), r.PathValue("role_id"), r.Method == http.MethodPut); err != nil {
		ctlError(w, http.StatusNotFound, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) ctlDeleteRole(w http.ResponseWriter, r *http.Request) {
	err := s.mutate(func(rq *request) error {
		g, ok := s.st.guilds[r.PathValue("id")]
		if !ok {
			return errors.New("sim: unknown guild")
		}
		role, ok := g.roles[r.PathValue("role_id")]
		if !ok || role.id == g.id {
			return errors.New("sim: unknown role")
		}
		s.st.deleteRole(g, role)
		rq.emit(g.id, "GUILD_ROLE_DELETE", map[string]any{"guild_id": g.id, "role_id": role.id})
		return nil
	})
	if err != nil {
		ctlError(w, http.StatusNotFound, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) ctlFaults(w http.ResponseWriter, r *http.Request) {
	var f Fault
	if !decodeControl(w, r, &f) {
		return
	}
	if err := s.SetFault(f); err != nil {
		ctlError(w, http.StatusBadRequest, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// LimitChange is POST /_sim/limits. Route with Limit and WindowMS sets a
// bucket limit; Global sets the per-second global limit;
// InvalidRequestLimit sets the blocking threshold.
type LimitChange struct {
	Route               string `json:"route,omitempty"`
	Limit               int    `json:"limit,omitempty"`
	WindowMS            int64  `json:"window_ms,omitempty"`
	Global              int    `json:"global,omitempty"`
	InvalidRequestLimit int    `json:"invalid_request_limit,omitempty"`
}

// SetLimits applies a limit change.
func (s *Server) SetLimits(c LimitChange) error {
	if c.Route != "" {
		if s.routeByKey(c.Route) == nil {
			return fmt.Errorf("sim: unknown route %q", c.Route)
		}
		if c.Limit <= 0 || c.WindowMS <= 0 {
			return fmt.Errorf("sim: route limit needs limit and window_ms above zero")
		}
	}
	if c.Global < 0 || c.InvalidRequestLimit < 0 {
		return fmt.Errorf("sim: limits must not be negative")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.Route != "" {
		s.limits[c.Route] = Limit{Requests: c.Limit, Window: time.Duration(c.WindowMS) * time.Millisecond}
	}
	if c.Global > 0 {
		s.global = c.Global
	}
	if c.InvalidRequestLimit > 0 {
		s.invalidN = c.InvalidRequestLimit
	}
	return nil
}

func (s *Server) ctlLimits(w http.ResponseWriter, r *http.Request) {
	var c LimitChange
	if !decodeControl(w, r, &c) {
		return
	}
	if err := s.SetLimits(c); err != nil {
		ctlError(w, http.StatusBadRequest, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// TokenReset is POST /_sim/token: the bot's token is reset (see
// Server.ResetToken).
type TokenReset struct {
	Token string `json:"token"`
}

func (s *Server) ctlToken(w http.ResponseWriter, r *http.Request) {
	var req TokenReset
	if !decodeControl(w, r, &req) {
		return
	}
	if req.Token == "" {
		ctlError(w, http.StatusBadRequest, errors.New("sim: token must not be empty"))
		return
	}
	s.ResetToken(req.Token)
	w.WriteHeader(http.StatusNoContent)
}
