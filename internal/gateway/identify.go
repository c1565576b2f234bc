package gateway

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/herald-bot/herald/internal/discord/transport"
)

// Before every IDENTIFY herald reads GET /gateway/bot: where sessions
// start, and the session start limit ("Get Gateway Bot", "Session Start
// Limit Object"). With no start remaining it waits for the limit's reset:
// an IDENTIFY beyond it would end every session and reset the bot's
// token. It also keeps max_concurrency's pace: one IDENTIFY per rate-limit
// key (shard_id % max_concurrency) every 5 seconds ("Sharding › Max
// Concurrency").

// identifyWindow is max_concurrency's window.
const identifyWindow = 5 * time.Second

// gatewayBot is GET /gateway/bot's answer.
type gatewayBot struct {
	URL               string `json:"url"`
	SessionStartLimit struct {
		Total          int   `json:"total"`
		Remaining      int   `json:"remaining"`
		ResetAfter     int64 `json:"reset_after"` // milliseconds
		MaxConcurrency int   `json:"max_concurrency"`
	} `json:"session_start_limit"`
}

func (s *Session) readGatewayBot() (gatewayBot, error) {
	var b gatewayBot
	req, err := http.NewRequestWithContext(s.ctx, http.MethodGet, "https://discord.com/api/v10/gateway/bot", nil)
	if err != nil {
		return b, err
	}
	req.Header.Set("Authorization", "Bot "+s.o.Token)
	resp, err := (&http.Client{Transport: s.o.Transport}).Do(req)
	if errors.Is(err, transport.ErrUnauthorized) {
		return b, rejectedToken()
	}
	if err != nil {
		return b, fmt.Errorf("gateway: GET /gateway/bot: %w", err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusUnauthorized:
		return b, rejectedToken()
	case resp.StatusCode != http.StatusOK:
		return b, fmt.Errorf("gateway: GET /gateway/bot answered %s", resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(&b); err != nil || b.URL == "" {
		return b, fmt.Errorf("gateway: GET /gateway/bot answered no gateway URL (%v)", err)
	}
	b.SessionStartLimit.MaxConcurrency = max(b.SessionStartLimit.MaxConcurrency, 1)
	return b, nil
}

// rejectedToken is a 401 on GET /gateway/bot: the token the gateway would
// refuse with 4004.
func rejectedToken() *FatalCloseError {
	e := fatalClose(4004, 0)
	e.Reason = "Discord rejected the bot token (401 on GET /gateway/bot)"
	return e
}

// startAllowed waits until the session may IDENTIFY and returns the URL
// to identify on.
func (s *Session) startAllowed() (string, error) {
	for {
		b, err := s.readGatewayBot()
		if err != nil {
			return "", err
		}
		l := b.SessionStartLimit
		if l.Remaining > 0 {
			key := identifyKey{bot: sha256.Sum256([]byte(s.o.Token)), gateway: b.URL, key: s.o.ShardID % l.MaxConcurrency}
			return b.URL, s.identifyTurn(key)
		}
		wait := max(time.Duration(l.ResetAfter)*time.Millisecond, time.Second)
		s.log.Warn("gateway: Discord's session start limit is used up; waiting for it to reset before identifying",
			"total", l.Total, "reset_after", wait)
		if err := s.sleep(wait); err != nil {
			return "", err
		}
	}
}

// Pacer keeps max_concurrency's pace between the sessions that share it:
// when each rate-limit key may IDENTIFY next. Shards opened by one
// process share one; a session without one paces only itself. A key
// names the bot and its gateway too, so sessions of other bots (or of
// tests against other simulators) do not wait for each other.
type Pacer struct {
	mu   sync.Mutex
	next map[identifyKey]time.Time
}

// NewPacer returns a Pacer for sessions to share.
func NewPacer() *Pacer { return &Pacer{next: map[identifyKey]time.Time{}} }

type identifyKey struct {
	bot     [32]byte // the token's hash
	gateway string
	key     int // shard_id % max_concurrency
}

// identifyTurn waits for k's turn and takes it.
func (s *Session) identifyTurn(k identifyKey) error {
	p := s.o.Pacer
	for {
		p.mu.Lock()
		now := s.clock.Now()
		at := p.next[k]
		if !now.Before(at) {
			p.next[k] = now.Add(identifyWindow)
			p.mu.Unlock()
			return nil
		}
		p.mu.Unlock()
		if err := s.sleep(at.Sub(now)); err != nil {
			return err
		}
	}
}
