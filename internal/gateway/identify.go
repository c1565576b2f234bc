package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/herald-bot/herald/internal/discord/transport"
)

// Before every IDENTIFY herald reads GET /gateway/bot: where sessions
// start, and the session start limit ("Get Gateway Bot", "Session Start
// Limit Object"). With no start remaining it waits for the limit's reset:
// an IDENTIFY beyond it would end every session and reset the bot's
// token. It also keeps max_concurrency's pace: one IDENTIFY per rate-limit
// key (shard_id % max_concurrency) every 5 seconds ("Sharding › Max
// Concurrency").

// identifyWindow is max_concurrency's window, "per 5 seconds" in
// Discord's documentation of the session start limit.
const identifyWindow = 5 * time.Second

// gatewayBot is GET /gateway/bot's answer.
type gatewayBot struct {
	URL               string `json:"url"`
	Shards            int    `json:"shards"`
	SessionStartLimit struct {
		Total          int   `json:"total"`
		Remaining      int   `json:"remaining"`
		ResetAfter     int64 `json:"reset_after"` // milliseconds
		MaxConcurrency int   `json:"max_concurrency"`
	} `json:"session_start_limit"`
}

func (s *Session) readGatewayBot() (gatewayBot, error) {
	return readGatewayBot(s.ctx, s.o.Token, s.o.Transport)
}

// Answer is one answer of GET /gateway/bot, read for the shard count
// (Recommended), which the first session of the process to IDENTIFY uses
// instead of asking again while it is fresh: a start costs one call, not
// two. The route has a small bucket of its own (the simulator's: 5 calls
// in 5 s): asking twice per start, a process restarted after kill -9 in
// quick succession (internal/faults) waited 3-4 s for it on every third
// start.
type Answer struct {
	bot  gatewayBot
	at   time.Time
	used atomic.Bool
}

// answerFresh is how long an Answer may serve an IDENTIFY.
const answerFresh = 5 * time.Second

// take is a's answer for one IDENTIFY: only once, only while fresh, and
// only with starts to spare beyond what other processes' identifies
// (one per rate-limit key each window) may have spent since it was read.
func (a *Answer) take(now time.Time) (gatewayBot, bool) {
	if a == nil || now.Sub(a.at) > answerFresh || a.bot.SessionStartLimit.Remaining <= 2*a.bot.SessionStartLimit.MaxConcurrency {
		return gatewayBot{}, false
	}
	return a.bot, a.used.CompareAndSwap(false, true)
}

// Recommended is the number of shards Discord recommends for the bot
// (GET /gateway/bot), at least 1, with the answer it read.
func Recommended(ctx context.Context, token string, rt http.RoundTripper) (int, *Answer, error) {
	b, err := readGatewayBot(ctx, token, rt)
	if err != nil {
		return 0, nil, err
	}
	return max(b.Shards, 1), &Answer{bot: b, at: time.Now()}, nil
}

func readGatewayBot(ctx context.Context, token string, rt http.RoundTripper) (gatewayBot, error) {
	var b gatewayBot
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://discord.com/api/v10/gateway/bot", nil)
	if err != nil {
		return b, err
	}
	req.Header.Set("Authorization", "Bot "+token)
	resp, err := (&http.Client{Transport: rt}).Do(req)
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
	b, ok := s.o.Answer.take(time.Now())
	for {
		if !ok {
			var err error
			if b, err = s.readGatewayBot(); err != nil {
				return "", err
			}
		}
		ok = false
		l := b.SessionStartLimit
		if l.Remaining > 0 {
			return b.URL, s.identifyTurn(s.o.ShardID % l.MaxConcurrency)
		}
		wait := max(time.Duration(l.ResetAfter)*time.Millisecond, time.Second)
		s.log.Warn("gateway: Discord's session start limit is used up; waiting for it to reset before identifying",
			"total", l.Total, "reset_after", wait)
		if err := s.sleep(wait); err != nil {
			return "", err
		}
	}
}

// Pacer gives sessions their IDENTIFY turns under max_concurrency: one
// per rate-limit key (shard_id % max_concurrency) per window. Reserve
// takes the next turn of key and returns how long to wait for it. Shards
// of one process share a LocalPacer; processes sharing a bot token share
// one through Postgres (internal/cluster).
type Pacer interface {
	Reserve(ctx context.Context, key int, window time.Duration) (time.Duration, error)
}

// LocalPacer paces the sessions of one process by its clock.
type LocalPacer struct {
	clock clockwork.Clock
	mu    sync.Mutex
	next  map[int]time.Time
}

// NewPacer returns a LocalPacer for sessions to share; nil clock is the
// real one.
func NewPacer(clock clockwork.Clock) *LocalPacer {
	if clock == nil {
		clock = clockwork.NewRealClock()
	}
	return &LocalPacer{clock: clock, next: map[int]time.Time{}}
}

// Reserve takes key's next turn.
func (p *LocalPacer) Reserve(_ context.Context, key int, window time.Duration) (time.Duration, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.clock.Now()
	at := p.next[key]
	if at.Before(now) {
		at = now
	}
	p.next[key] = at.Add(window)
	return at.Sub(now), nil
}

// identifyTurn waits for the session's turn to IDENTIFY.
func (s *Session) identifyTurn(key int) error {
	window := s.o.IdentifyWindow
	if window <= 0 {
		window = identifyWindow
	}
	wait, err := s.o.Pacer.Reserve(s.ctx, key, window)
	if err != nil {
		return err
	}
	if wait <= 0 {
		return nil
	}
	return s.sleep(wait)
}
