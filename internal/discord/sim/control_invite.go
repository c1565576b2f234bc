package sim

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// Authorization is the body of POST /_sim/oauth2/authorize: a server's
// owner opening a bot invite URL and picking the server.
type Authorization struct {
	URL     string `json:"url"`
	GuildID string `json:"guild_id"`
}

// Authorize does what Discord does when a server's owner accepts a bot
// invite (OAuth2 "Bot Authorization Flow"): the URL must be Discord's
// authorize page for this application with the bot scope; the bot joins
// the server with a managed role holding exactly the permissions the URL
// asks for, placed lowest above @everyone (the owner drags it above the
// roles it should hand out), and its sessions get GUILD_CREATE. An
// authorization for a server the bot is in already sets its managed
// role's permissions. It returns the managed role's id.
func (s *Server) Authorize(a Authorization) (string, error) {
	u, err := url.Parse(a.URL)
	if err != nil || u.Scheme != "https" || u.Host != "discord.com" || u.Path != "/oauth2/authorize" {
		return "", fmt.Errorf("sim: %q is not Discord's OAuth2 authorize URL", a.URL)
	}
	q := u.Query()
	if !slices.Contains(strings.Fields(q.Get("scope")), "bot") {
		return "", errors.New("sim: the invite lacks the bot scope")
	}
	perms, err := strconv.ParseUint(q.Get("permissions"), 10, 64)
	if q.Get("permissions") != "" && err != nil {
		return "", fmt.Errorf("sim: permissions %q is not a bitfield", q.Get("permissions"))
	}
	var roleID string
	var created *guildCreate
	err = s.mutate(func(rq *request) error {
		st := s.st
		if q.Get("client_id") != st.appID {
			return errors.New("sim: the invite names another application")
		}
		g, ok := st.guilds[a.GuildID]
		if !ok {
			return errors.New("sim: unknown guild")
		}
		if m := g.members[st.botID]; m != nil {
			for _, id := range m.roles {
				if r := g.roles[id]; r.managed {
					r.permissions, roleID = perms, r.id
					rq.emit(g.id, "GUILD_ROLE_UPDATE", map[string]any{"guild_id": g.id, "role": renderRole(r)})
				}
			}
			return nil
		}
		for _, r := range g.roles {
			if r.id != g.id {
				r.position++
			}
		}
		r := &role{id: st.ids.next(rq.now), name: s.opts.BotName, permissions: perms, position: 1, managed: true}
		g.roles[r.id] = r
		g.members[st.botID] = &member{userID: st.botID, roles: []string{r.id}, joinedAt: rq.now}
		roleID, created = r.id, st.renderGuildCreate(g)
		return nil
	})
	if err == nil && created != nil {
		s.gw.DispatchGuild(a.GuildID, created.full, created.withoutPresences)
	}
	return roleID, err
}

func (s *Server) ctlAuthorize(w http.ResponseWriter, r *http.Request) {
	var a Authorization
	if !decodeControl(w, r, &a) {
		return
	}
	id, err := s.Authorize(a)
	if err != nil {
		ctlError(w, http.StatusBadRequest, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"bot_role_id": id})
}

// ctlMoveRole is PATCH /_sim/guilds/{id}/roles/{role_id} {"position": N}:
// the owner dragging a role in Server Settings › Roles. Positions stay
// 1..n above @everyone, the others shifting as in Discord's list.
func (s *Server) ctlMoveRole(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Position int `json:"position"`
	}
	if !decodeControl(w, r, &body) {
		return
	}
	err := s.mutate(func(rq *request) error {
		g, ok := s.st.guilds[r.PathValue("id")]
		if !ok {
			return errors.New("sim: unknown guild")
		}
		moved, ok := g.roles[r.PathValue("role_id")]
		if !ok || moved.id == g.id {
			return errors.New("sim: unknown role")
		}
		order := slices.DeleteFunc(g.sortedRoles(), func(x *role) bool { return x.id == g.id || x.id == moved.id })
		if body.Position < 1 || body.Position > len(order)+1 {
			return fmt.Errorf("sim: position %d is not between 1 and %d", body.Position, len(order)+1)
		}
		order = slices.Insert(order, body.Position-1, moved)
		for i, x := range order {
			if x.position != i+1 {
				x.position = i + 1
				rq.emit(g.id, "GUILD_ROLE_UPDATE", map[string]any{"guild_id": g.id, "role": renderRole(x)})
			}
		}
		return nil
	})
	if err != nil {
		ctlError(w, http.StatusBadRequest, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
