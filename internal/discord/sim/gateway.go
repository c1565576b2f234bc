package sim

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

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
		SessionStarts: wsgateway.StartLimit{
			Total: wsgateway.DefaultStartTotal, Remaining: wsgateway.DefaultStartTotal, MaxConcurrency: 1,
		},
		StartWindow:    s.scaled(wsgateway.DefaultStartWindow),
		IdentifyWindow: s.scaled(wsgateway.DefaultIdentifyWindow),
		TokenReset: func() {
			// Discord mails the owner the new token; nobody here knows it.
			s.mu.Lock()
			defer s.mu.Unlock()
			s.token = newToken()
		},
	})
}

func (s *Server) ready(shardID, shardCount int, presences bool) wsgateway.Ready {
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
		g, _ := json.Marshal(s.st.renderGatewayGuild(s.st.guilds[id], presences))
		r.Guilds = append(r.Guilds, g)
	}
	return r
}

// GatewaySessions is the number of connected gateway sessions.
func (s *Server) GatewaySessions() int { return s.gw.Sessions() }

// GatewayState is GET /_sim/gateway: the gateway's counters and its
// session start limit.
type GatewayState struct {
	wsgateway.Stats
	SessionStartLimit SessionStartLimit `json:"session_start_limit"`
}

// SessionStartLimit is GET /gateway/bot's session_start_limit
// (reset_after in milliseconds).
type SessionStartLimit struct {
	Total          int   `json:"total"`
	Remaining      int   `json:"remaining"`
	ResetAfter     int64 `json:"reset_after"`
	MaxConcurrency int   `json:"max_concurrency"`
}

// StartLimitChange is POST /_sim/gateway: it sets the session start limit
// as Discord changes it for a bot. Absent fields keep their value;
// reset_after is in milliseconds of Discord's time, scaled.
type StartLimitChange struct {
	Total          *int   `json:"total,omitempty"`
	Remaining      *int   `json:"remaining,omitempty"`
	ResetAfter     *int64 `json:"reset_after,omitempty"`
	MaxConcurrency *int   `json:"max_concurrency,omitempty"`
	// IdentifyWindowMS replaces Discord's 5 seconds between identifies
	// of one rate-limit key (scaled), for tests about something else that
	// restart herald often: crashes, say.
	IdentifyWindowMS *int64 `json:"identify_window_ms,omitempty"`
}

// Gateway returns the gateway's counters and session start limit.
func (s *Server) Gateway() GatewayState {
	return GatewayState{Stats: s.gw.Stats(), SessionStartLimit: sessionStartLimit(s.gw.StartLimit())}
}

func sessionStartLimit(l wsgateway.StartLimit) SessionStartLimit {
	return SessionStartLimit{Total: l.Total, Remaining: l.Remaining, ResetAfter: l.ResetAfter.Milliseconds(), MaxConcurrency: l.MaxConcurrency}
}

// SetSessionStartLimit applies a start limit change.
func (s *Server) SetSessionStartLimit(c StartLimitChange) error {
	l := s.gw.StartLimit()
	if c.Total != nil {
		l.Total = *c.Total
	}
	if c.Remaining != nil {
		l.Remaining = *c.Remaining
	}
	if c.ResetAfter != nil {
		if *c.ResetAfter < 0 {
			return errors.New("sim: reset_after must not be negative")
		}
		l.ResetAfter = s.scaled(time.Duration(*c.ResetAfter) * time.Millisecond)
	}
	if c.MaxConcurrency != nil {
		l.MaxConcurrency = *c.MaxConcurrency
	}
	if c.IdentifyWindowMS != nil {
		if err := s.gw.SetIdentifyWindow(s.scaled(time.Duration(*c.IdentifyWindowMS) * time.Millisecond)); err != nil {
			return fmt.Errorf("sim: %w", err)
		}
	}
	if err := s.gw.SetStartLimit(l); err != nil {
		return fmt.Errorf("sim: %w", err)
	}
	return nil
}

func (s *Server) ctlGateway(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost {
		var c StartLimitChange
		if !decodeControl(w, r, &c) {
			return
		}
		if err := s.SetSessionStartLimit(c); err != nil {
			ctlError(w, http.StatusBadRequest, err)
			return
		}
	}
	writeJSON(w, http.StatusOK, s.Gateway())
}

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
		"url":                 gatewayURL(rq.r),
		"shards":              1,
		"session_start_limit": sessionStartLimit(s.gw.StartLimit()),
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
