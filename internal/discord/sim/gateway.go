package sim

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/herald-bot/herald/internal/discord/sim/wsgateway"
)

// newGateway builds the websocket gateway, with READY and GUILD_CREATE
// taken from the simulator's state at IDENTIFY.
func newGateway(s *Server) *wsgateway.Gateway {
	return wsgateway.New(wsgateway.Config{
		Clock:             s.clock,
		HeartbeatInterval: s.scaled(s.opts.HeartbeatInterval),
		Authorize: func(token string) bool {
			s.mu.Lock()
			defer s.mu.Unlock()
			return s.tokenAccepted(token)
		},
		DisallowedIntents: func() int64 {
			s.mu.Lock()
			defer s.mu.Unlock()
			return s.st.disallowedIntents()
		},
		Ready:  s.ready,
		Logger: s.opts.Logger,
	})
}

func (s *Server) ready(shardID, shardCount int) wsgateway.Ready {
	s.mu.Lock()
	defer s.mu.Unlock()
	user, _ := json.Marshal(s.st.renderUser(s.st.botID))
	app, _ := json.Marshal(map[string]any{"id": s.st.appID, "flags": s.st.appFlags})
	r := wsgateway.Ready{User: user, Application: app}
	for _, id := range s.st.guildOrder {
		if s.st.guilds[id].members[s.st.botID] == nil {
			continue // not invited yet
		}
		if shardCount > 1 {
			n, _ := strconv.ParseUint(id, 10, 64)
			if int((n>>22)%uint64(shardCount)) != shardID {
				continue
			}
		}
		g, _ := json.Marshal(s.st.renderGatewayGuild(s.st.guilds[id]))
		r.Guilds = append(r.Guilds, g)
	}
	return r
}

// GatewaySessions is the number of connected gateway sessions.
func (s *Server) GatewaySessions() int { return s.gw.Sessions() }

func gatewayURL(r *http.Request) string {
	scheme := "ws"
	if r.TLS != nil {
		scheme = "wss"
	}
	return scheme + "://" + r.Host + "/gateway-ws"
}

func getGateway(s *Server, rq *request) (any, *apiError) {
	return map[string]any{"url": gatewayURL(rq.r)}, nil
}

func getGatewayBot(s *Server, rq *request) (any, *apiError) {
	return map[string]any{
		"url":    gatewayURL(rq.r),
		"shards": 1,
		"session_start_limit": map[string]any{
			"total": 1000, "remaining": 1000, "reset_after": 0, "max_concurrency": 1,
		},
	}, nil
}

func getCurrentUser(s *Server, rq *request) (any, *apiError) {
	u := s.st.renderUser(s.st.botID)
	u["mfa_enabled"] = false
	u["locale"] = "en-US"
	u["verified"] = true
	return u, nil
}

// tokenAccepted reports whether token is the bot's current token. The
// lock is held.
func (s *Server) tokenAccepted(token string) bool { return s.token == "" || token == s.token }

// ResetToken makes token the bot's only valid one, as "Reset Token" in
// Discord's developer portal does: the old token gets 401 on REST, and
// every gateway session is closed with 4004 Authentication failed.
func (s *Server) ResetToken(token string) {
	s.mu.Lock()
	s.token = token
	s.mu.Unlock()
	s.gw.Disconnect(wsgateway.CloseAuthenticationFailed)
}
