package sim

import (
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
)

// Application flags the simulator models (Discord's "Application Flags"):
// the privileged intents the Developer Portal switches on. A verified
// application gets the plain bit, one under 100 servers the _LIMITED one;
// either lets the bot identify with the intent.
const (
	AppFlagGatewayPresence              int64 = 1 << 12
	AppFlagGatewayPresenceLimited       int64 = 1 << 13
	AppFlagGatewayGuildMembers          int64 = 1 << 14
	AppFlagGatewayGuildMembersLimited   int64 = 1 << 15
	AppFlagGatewayMessageContent        int64 = 1 << 18
	AppFlagGatewayMessageContentLimited int64 = 1 << 19
)

// Privileged gateway intents (Discord's "Privileged Intents").
const (
	intentGuildMembers   int64 = 1 << 1
	intentGuildPresences int64 = 1 << 8
	intentMessageContent int64 = 1 << 15
)

// privileged pairs each privileged intent with the flags that allow it.
var privileged = []struct{ intent, flags int64 }{
	{intentGuildMembers, AppFlagGatewayGuildMembers | AppFlagGatewayGuildMembersLimited},
	{intentGuildPresences, AppFlagGatewayPresence | AppFlagGatewayPresenceLimited},
	{intentMessageContent, AppFlagGatewayMessageContent | AppFlagGatewayMessageContentLimited},
}

// disallowedIntents are the privileged intents the application's flags do
// not allow: IDENTIFY with one of them closes with 4014. The lock is held.
func (s *state) disallowedIntents() int64 {
	var out int64
	for _, p := range privileged {
		if s.appFlags&p.flags == 0 {
			out |= p.intent
		}
	}
	return out
}

// hasMessageContent reports whether the application may read message
// content: without it Discord blanks content, embeds, attachments and
// components in what the bot reads, gateway and REST alike.
func (s *state) hasMessageContent() bool {
	return s.appFlags&(AppFlagGatewayMessageContent|AppFlagGatewayMessageContentLimited) != 0
}

// hasServerMembers reports whether the application may list a guild's
// members: List Guild Members "requires the GUILD_MEMBERS Privileged
// Intent", whatever intents a session identified with.
func (s *state) hasServerMembers() bool {
	return s.appFlags&(AppFlagGatewayGuildMembers|AppFlagGatewayGuildMembersLimited) != 0
}

// getApplication is GET /applications/@me and GET /oauth2/applications/@me:
// the bot's own application, owned by a developer account rather than a
// team, with the flags the Developer Portal set.
func getApplication(s *Server, _ *request) (any, *apiError) {
	return s.renderApplication(), nil
}

// renderApplication is the application as GET /applications/@me reports
// it: verify_key is the hex public key interactions are signed with. The
// lock is held.
func (srv *Server) renderApplication() map[string]any {
	s := srv.st
	var endpoint any
	if srv.endpoint != "" {
		endpoint = srv.endpoint
	}
	scopes := []any{"bot", "applications.commands"}
	return map[string]any{
		"id": s.appID, "name": srv.opts.BotName, "icon": nil, "description": "", "type": nil,
		"bot": s.renderUser(s.botID), "bot_public": true, "bot_require_code_grant": false,
		"verify_key": hex.EncodeToString(srv.key.Public().(ed25519.PublicKey)), "flags": s.appFlags, "flags_new": strconv.FormatInt(s.appFlags, 10),
		"redirect_uris": []any{}, "interactions_endpoint_url": endpoint, "role_connections_verification_url": nil,
		"owner":                   s.renderUser(s.ownerID),
		"approximate_guild_count": len(s.guilds), "approximate_user_install_count": 0,
		"approximate_user_authorization_count": 0, "explicit_content_filter": 0, "team": nil,
		"install_params":         map[string]any{"scopes": scopes, "permissions": "0"},
		"eligible_oauth2_scopes": scopes,
	}
}

// knownAppFlags are the bits of Discord's "Application Flags" table.
const knownAppFlags int64 = 1<<6 | 1<<12 | 1<<13 | 1<<14 | 1<<15 | 1<<16 | 1<<17 | 1<<18 | 1<<19 | 1<<23

// SetApplicationFlags sets the application's flags, as its owner does by
// switching privileged intents on or off in the Developer Portal. Sessions
// already connected keep their intents; the next IDENTIFY is checked
// against the new flags.
func (s *Server) SetApplicationFlags(flags int64) error {
	if flags < 0 || flags&^knownAppFlags != 0 {
		return fmt.Errorf("sim: application flags %d hold bits Discord does not define", flags)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.appFlags = flags
	return nil
}

// ctlApplication is POST /_sim/application: the Developer Portal's
// settings of the application, {"flags": N} and/or
// {"interactions_endpoint_url": "https://…"} ("" removes it). Saving a URL
// checks the endpoint as Discord does (see SetInteractionsEndpoint); one
// that fails answers 400 with Discord's 50035 error and changes nothing.
// It answers the application as GET /applications/@me then reports it.
func (s *Server) ctlApplication(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Flags    *int64  `json:"flags"`
		Endpoint *string `json:"interactions_endpoint_url"`
	}
	if !decodeControl(w, r, &body) {
		return
	}
	if body.Flags == nil && body.Endpoint == nil {
		ctlError(w, http.StatusBadRequest, errors.New("sim: POST /_sim/application needs flags or interactions_endpoint_url"))
		return
	}
	if body.Flags != nil {
		if err := s.SetApplicationFlags(*body.Flags); err != nil {
			ctlError(w, http.StatusBadRequest, err)
			return
		}
	}
	if body.Endpoint != nil {
		if err := s.SetInteractionsEndpoint(*body.Endpoint); err != nil {
			var api *apiError
			if errors.As(err, &api) {
				writeJSON(w, api.status, api.body())
				return
			}
			ctlError(w, http.StatusBadRequest, err)
			return
		}
	}
	s.mu.Lock()
	app := s.renderApplication()
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, app)
}
