package sim

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

const permManageNicknames uint64 = 1 << 27

func getGuild(s *Server, rq *request) (any, *apiError) {
	g, err := s.st.guild(rq.params["guild_id"])
	if err != nil {
		return nil, err
	}
	return s.st.renderGuild(g), nil
}

func listRoles(s *Server, rq *request) (any, *apiError) {
	g, err := s.st.guild(rq.params["guild_id"])
	if err != nil {
		return nil, err
	}
	out := []any{}
	for _, r := range g.sortedRoles() {
		out = append(out, renderRole(r))
	}
	return out, nil
}

// roleBody is the JSON of role create and modify.
type roleBody struct {
	Name        *string `json:"name"`
	Permissions *string `json:"permissions"`
	Color       *int    `json:"color"`
	Hoist       *bool   `json:"hoist"`
	Mentionable *bool   `json:"mentionable"`
}

// apply validates the body and copies it onto r. A bot cannot grant
// permissions it does not hold itself.
func (b roleBody) apply(st *state, g *guild, r *role) *apiError {
	var f formErrors
	if b.Name != nil {
		f.maxLen("name", len([]rune(*b.Name)), 100)
	}
	var perms uint64
	if b.Permissions != nil {
		p, perr := strconv.ParseUint(*b.Permissions, 10, 64)
		if perr != nil {
			f.add("permissions", "NUMBER_TYPE_COERCE", "Value \""+*b.Permissions+"\" is not snowflake.")
		}
		perms = p
	}
	if err := f.err(); err != nil {
		return err
	}
	if b.Permissions != nil && perms&^basePermissions(g, st.botMember(g)) != 0 {
		return errMissingPermissions
	}
	if b.Name != nil {
		r.name = *b.Name
	}
	if b.Permissions != nil {
		r.permissions = perms
	}
	if b.Color != nil {
		r.color = *b.Color
	}
	if b.Hoist != nil {
		r.hoist = *b.Hoist
	}
	if b.Mentionable != nil {
		r.mentionable = *b.Mentionable
	}
	return nil
}

func createRole(s *Server, rq *request) (any, *apiError) {
	g, err := s.st.guild(rq.params["guild_id"])
	if err != nil {
		return nil, err
	}
	var body roleBody
	if err := rq.decode(&body); err != nil {
		return nil, err
	}
	if err := s.st.requireGuild(g, permManageRoles); err != nil {
		return nil, err
	}
	if len(g.roles) >= maxGuildRoles {
		return nil, errMaxRoles
	}
	r := &role{id: s.st.ids.next(rq.now), name: "new role", permissions: g.everyone().permissions, position: 1}
	if err := body.apply(s.st, g, r); err != nil {
		return nil, err
	}
	// Discord puts a new role right above @everyone.
	for _, other := range g.roles {
		if other.position >= 1 {
			other.position++
		}
	}
	g.roles[r.id] = r
	rq.emit(g.id, "GUILD_ROLE_CREATE", map[string]any{"guild_id": g.id, "role": renderRole(r)})
	return renderRole(r), nil
}

func (s *Server) guildRole(rq *request) (*guild, *role, *apiError) {
	g, err := s.st.guild(rq.params["guild_id"])
	if err != nil {
		return nil, nil, err
	}
	r, ok := g.roles[rq.params["role_id"]]
	if !ok {
		return nil, nil, errUnknown(codeUnknownRole)
	}
	return g, r, nil
}

func modifyRole(s *Server, rq *request) (any, *apiError) {
	g, r, err := s.guildRole(rq)
	if err != nil {
		return nil, err
	}
	var body roleBody
	if err := rq.decode(&body); err != nil {
		return nil, err
	}
	if err := s.st.requireRoleBelowBot(g, r); err != nil {
		return nil, err
	}
	if err := body.apply(s.st, g, r); err != nil {
		return nil, err
	}
	rq.emit(g.id, "GUILD_ROLE_UPDATE", map[string]any{"guild_id": g.id, "role": renderRole(r)})
	return renderRole(r), nil
}

func deleteRole(s *Server, rq *request) (any, *apiError) {
	g, r, err := s.guildRole(rq)
	if err != nil {
		return nil, err
	}
	if r.id == g.id {
		return nil, &apiError{status: http.StatusBadRequest, code: 50028, message: "Invalid role"}
	}
	if err := s.st.requireRoleBelowBot(g, r); err != nil {
		return nil, err
	}
	s.st.deleteRole(g, r)
	rq.emit(g.id, "GUILD_ROLE_DELETE", map[string]any{"guild_id": g.id, "role_id": r.id})
	return nil, nil
}

// deleteRole removes a role from the guild, from every member and from
// every channel overwrite.
func (st *state) deleteRole(g *guild, r *role) {
	delete(g.roles, r.id)
	for _, m := range g.members {
		m.roles = slices.DeleteFunc(m.roles, func(id string) bool { return id == r.id })
	}
	for _, id := range g.channels {
		c := st.channels[id]
		c.overwrites = slices.DeleteFunc(c.overwrites, func(o overwrite) bool { return o.typ == 0 && o.id == r.id })
	}
}

func (s *Server) guildMember(rq *request) (*guild, *member, *apiError) {
	g, err := s.st.guild(rq.params["guild_id"])
	if err != nil {
		return nil, nil, err
	}
	m, ok := g.members[rq.params["user_id"]]
	if !ok {
		return nil, nil, errUnknown(codeUnknownMember)
	}
	return g, m, nil
}

func getMember(s *Server, rq *request) (any, *apiError) {
	_, m, err := s.guildMember(rq)
	if err != nil {
		return nil, err
	}
	return s.st.renderMember(m), nil
}

func listMembers(s *Server, rq *request) (any, *apiError) {
	g, err := s.st.guild(rq.params["guild_id"])
	if err != nil {
		return nil, err
	}
	if !s.st.hasServerMembers() {
		return nil, errMissingAccess
	}
	q := rq.r.URL.Query()
	limit, ferr := queryInt(q.Get("limit"), "limit", 1, 1, 1000)
	if ferr != nil {
		return nil, ferr
	}
	after := q.Get("after")
	ids := make([]string, 0, len(g.members))
	for id := range g.members {
		if after == "" || snowflakeLess(after, id) {
			ids = append(ids, id)
		}
	}
	return s.st.renderMembers(g, ids, limit), nil
}

// searchMembers is Search Guild Members: the members whose username or
// nickname starts with query (case-insensitive), limit 1–1000 (default 1).
func searchMembers(s *Server, rq *request) (any, *apiError) {
	g, err := s.st.guild(rq.params["guild_id"])
	if err != nil {
		return nil, err
	}
	q := rq.r.URL.Query()
	if !q.Has("query") {
		var f formErrors
		f.required("query")
		return nil, f.err()
	}
	limit, ferr := queryInt(q.Get("limit"), "limit", 1, 1, 1000)
	if ferr != nil {
		return nil, ferr
	}
	prefix := strings.ToLower(q.Get("query"))
	var ids []string
	for id, m := range g.members {
		name := strings.ToLower(s.st.users[id].username)
		nick := ""
		if m.nick != nil {
			nick = strings.ToLower(*m.nick)
		}
		if strings.HasPrefix(name, prefix) || nick != "" && strings.HasPrefix(nick, prefix) {
			ids = append(ids, id)
		}
	}
	return s.st.renderMembers(g, ids, limit), nil
}

// renderMembers renders the first limit of the members ids, oldest
// account first, as both member lists answer.
func (s *state) renderMembers(g *guild, ids []string, limit int) []any {
	slices.SortFunc(ids, compareSnowflakes)
	out := []any{}
	for _, id := range ids[:min(limit, len(ids))] {
		out = append(out, s.renderMember(g.members[id]))
	}
	return out
}

func compareSnowflakes(a, b string) int {
	switch {
	case snowflakeLess(a, b):
		return -1
	case snowflakeLess(b, a):
		return 1
	}
	return 0
}

// queryInt parses an integer query parameter within [lo, hi], answering
// 50035 the way Discord does for a bad value.
func queryInt(raw, name string, def, lo, hi int) (int, *apiError) {
	if raw == "" {
		return def, nil
	}
	var f formErrors
	n, err := strconv.Atoi(raw)
	switch {
	case err != nil:
		f.add(name, "NUMBER_TYPE_COERCE", "Value \""+raw+"\" is not int.")
	case n < lo || n > hi:
		f.add(name, "NUMBER_TYPE_MAX", "int value should be between "+strconv.Itoa(lo)+" and "+strconv.Itoa(hi)+".")
	}
	return n, f.err()
}

// requireMemberRoleChange checks that the bot may add or remove r.
func (s *Server) requireMemberRoleChange(g *guild, r *role) *apiError {
	if r.managed || r.id == g.id {
		return errMissingPermissions
	}
	return s.st.requireRoleBelowBot(g, r)
}

func (s *Server) memberRoleChange(rq *request, add bool) (any, *apiError) {
	g, m, err := s.guildMember(rq)
	if err != nil {
		return nil, err
	}
	r, ok := g.roles[rq.params["role_id"]]
	if !ok {
		return nil, errUnknown(codeUnknownRole)
	}
	if err := s.requireMemberRoleChange(g, r); err != nil {
		return nil, err
	}
	has := hasRole(m, r.id)
	switch {
	case add && !has:
		m.roles = append(m.roles, r.id)
	case !add && has:
		m.roles = slices.DeleteFunc(m.roles, func(id string) bool { return id == r.id })
	default:
		return nil, nil
	}
	rq.emit(g.id, "GUILD_MEMBER_UPDATE", s.st.memberUpdate(g, m))
	return nil, nil
}

func (st *state) memberUpdate(g *guild, m *member) map[string]any {
	ev := st.renderMember(m)
	ev["guild_id"] = g.id
	return ev
}

func addMemberRole(s *Server, rq *request) (any, *apiError) { return s.memberRoleChange(rq, true) }

func removeMemberRole(s *Server, rq *request) (any, *apiError) {
	return s.memberRoleChange(rq, false)
}

// maxTimeout is the longest a member can be timed out: 28 days.
const maxTimeout = 28 * 24 * time.Hour

// memberBody is the JSON of Modify Guild Member that the simulator models.
type memberBody struct {
	Nick                       *string         `json:"nick"`
	Roles                      *[]string       `json:"roles"`
	CommunicationDisabledUntil json.RawMessage `json:"communication_disabled_until"`
}

// timeout reads communication_disabled_until: set says whether the body
// changes it, until is nil to lift a timeout.
func (b *memberBody) timeout(f *formErrors, now time.Time) (until *time.Time, set bool) {
	raw := b.CommunicationDisabledUntil
	if len(raw) == 0 {
		return nil, false
	}
	if string(raw) == "null" {
		return nil, true
	}
	var str string
	t, err := time.Time{}, json.Unmarshal(raw, &str)
	if err == nil {
		t, err = time.Parse(time.RFC3339Nano, str)
	}
	switch {
	case err != nil:
		f.add("communication_disabled_until", "DATE_TIME_TYPE_PARSE", "Could not interpret "+string(raw)+" as date time.")
	case t.Sub(now) > maxTimeout:
		f.add("communication_disabled_until", "COMMUNICATION_DISABLED_UNTIL_TOO_LARGE", "Timeouts can be at most 28 days.")
	}
	return &t, true
}

// modifyMember changes a member's nick (Manage Nicknames), roles (Manage
// Roles, each below the bot's top role) and timeout (Moderate Members).
// Nicks and timeouts also need the member below the bot in the hierarchy,
// and nobody times out the owner or an administrator.
func modifyMember(s *Server, rq *request) (any, *apiError) {
	g, m, err := s.guildMember(rq)
	if err != nil {
		return nil, err
	}
	var body memberBody
	if err := rq.decode(&body); err != nil {
		return nil, err
	}
	var f formErrors
	if body.Nick != nil {
		f.maxLen("nick", len([]rune(*body.Nick)), 32)
	}
	until, timeout := body.timeout(&f, rq.now)
	if err := f.err(); err != nil {
		return nil, err
	}
	if body.Nick != nil {
		if err := s.st.requireGuild(g, permManageNicknames); err != nil {
			return nil, err
		}
		if m.userID != s.st.botID {
			if err := s.requireMemberBelowBot(g, m); err != nil {
				return nil, err
			}
		}
	}
	if timeout {
		if err := s.st.requireGuild(g, permModerateMembers); err != nil {
			return nil, err
		}
		if basePermissions(g, m)&permAdministrator != 0 {
			return nil, errMissingPermissions
		}
		if err := s.requireMemberBelowBot(g, m); err != nil {
			return nil, err
		}
	}
	var roles []string
	if body.Roles != nil {
		for _, id := range *body.Roles {
			r, ok := g.roles[id]
			if !ok {
				return nil, errUnknown(codeUnknownRole)
			}
			if !slices.Contains(roles, id) {
				roles = append(roles, id)
			}
			if !hasRole(m, id) {
				if err := s.requireMemberRoleChange(g, r); err != nil {
					return nil, err
				}
			}
		}
		for _, id := range m.roles {
			if !slices.Contains(roles, id) {
				if err := s.requireMemberRoleChange(g, g.roles[id]); err != nil {
					return nil, err
				}
			}
		}
	}
	if body.Nick != nil {
		nick := *body.Nick
		m.nick = &nick
		if nick == "" {
			m.nick = nil
		}
	}
	if body.Roles != nil {
		m.roles = roles
	}
	if timeout {
		m.timeoutExpiry = until
	}
	rq.emit(g.id, "GUILD_MEMBER_UPDATE", s.st.memberUpdate(g, m))
	return s.st.renderMember(m), nil
}

// requireMemberBelowBot enforces the hierarchy on acting on a member: the
// owner is out of reach, and the member's top role must sit below the bot's.
func (s *Server) requireMemberBelowBot(g *guild, m *member) *apiError {
	bot := s.st.botMember(g)
	if bot.userID == g.ownerID {
		return nil
	}
	if m.userID == g.ownerID || !roleAbove(highestRole(g, bot), highestRole(g, m)) {
		return errMissingPermissions
	}
	return nil
}

func kickMember(s *Server, rq *request) (any, *apiError) {
	g, m, err := s.guildMember(rq)
	if err != nil {
		return nil, err
	}
	if err := s.st.requireGuild(g, permKickMembers); err != nil {
		return nil, err
	}
	if m.userID == s.st.botID {
		return nil, errMissingPermissions
	}
	if err := s.requireMemberBelowBot(g, m); err != nil {
		return nil, err
	}
	s.st.removeMember(g, m)
	rq.emit(g.id, "GUILD_MEMBER_REMOVE", map[string]any{"guild_id": g.id, "user": s.st.renderUser(m.userID)})
	return nil, nil
}

// removeMember takes a member out of the guild and its threads.
func (st *state) removeMember(g *guild, m *member) {
	delete(g.members, m.userID)
	for _, c := range st.channels {
		if c.guildID == g.id && c.threadMembers != nil {
			delete(c.threadMembers, m.userID)
		}
	}
}
