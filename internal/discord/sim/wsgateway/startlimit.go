package wsgateway

import (
	"crypto/sha256"
	"errors"
	"time"
)

// Discord's session start limit (GET /gateway/bot's session_start_limit,
// "Identifying" in the gateway docs): every IDENTIFY that starts a session
// spends one of the day's starts (a RESUME spends none); an IDENTIFY
// beyond them terminates every session of the application and resets its
// token. Identifies are also limited to one per rate-limit key
// (shard_id % max_concurrency) every 5 seconds; one too soon gets
// INVALID_SESSION.
const (
	DefaultStartTotal     = 1000
	DefaultStartWindow    = 24 * time.Hour
	DefaultIdentifyWindow = 5 * time.Second
)

// StartLimit is the session start limit as GET /gateway/bot reports it.
type StartLimit struct {
	Total          int           // session starts per window
	Remaining      int           // starts left in this window
	ResetAfter     time.Duration // until Remaining is Total again
	MaxConcurrency int           // identifies per IdentifyWindow, one per rate-limit key
}

// startResult is what the start limit makes of an IDENTIFY.
type startResult int

const (
	startOK        startResult = iota
	startTooSoon               // within IdentifyWindow of another on its key: INVALID_SESSION
	startExhausted             // no start left: sessions terminated, token reset
)

// starts keeps the session start limit. Guarded by Gateway.mu.
type starts struct {
	on             bool // false: no limit (Config.SessionStarts left zero)
	total          int
	remaining      int
	resetAt        time.Time
	window         time.Duration
	maxConcurrency int
	identifyWindow time.Duration
	lastIdentify   map[int]time.Time // rate-limit key → its last session start
	revoked        map[[32]byte]bool // tokens reset by an exhausted limit
}

func newStarts(cfg Config, now time.Time) starts {
	l := cfg.SessionStarts
	st := starts{
		on:             l.Total > 0,
		total:          l.Total,
		remaining:      l.Remaining,
		window:         cfg.StartWindow,
		maxConcurrency: max(l.MaxConcurrency, 1),
		identifyWindow: cfg.IdentifyWindow,
		lastIdentify:   map[int]time.Time{},
		revoked:        map[[32]byte]bool{},
	}
	if st.window <= 0 {
		st.window = DefaultStartWindow
	}
	if st.identifyWindow <= 0 {
		st.identifyWindow = DefaultIdentifyWindow
	}
	st.resetAt = now.Add(st.window)
	if l.ResetAfter > 0 {
		st.resetAt = now.Add(l.ResetAfter)
	}
	return st
}

// refill starts a new window once the current one has passed.
func (st *starts) refill(now time.Time) {
	if !now.Before(st.resetAt) {
		st.remaining = st.total
		st.resetAt = now.Add(st.window)
	}
}

// start spends one start for an IDENTIFY of shard with token at now.
func (st *starts) start(token string, shard int, now time.Time) startResult {
	if !st.on {
		return startOK
	}
	st.refill(now)
	key := shard % st.maxConcurrency
	if last, ok := st.lastIdentify[key]; ok && now.Sub(last) < st.identifyWindow {
		return startTooSoon
	}
	if st.remaining == 0 {
		st.revoked[sha256.Sum256([]byte(token))] = true
		return startExhausted
	}
	st.remaining--
	st.lastIdentify[key] = now
	return startOK
}

func (st *starts) isRevoked(token string) bool {
	return st.revoked[sha256.Sum256([]byte(token))]
}

func (st *starts) limit(now time.Time) StartLimit {
	st.refill(now)
	return StartLimit{Total: st.total, Remaining: st.remaining, ResetAfter: st.resetAt.Sub(now), MaxConcurrency: st.maxConcurrency}
}

// StartLimit returns the session start limit now; the zero StartLimit
// when the gateway has none.
func (g *Gateway) StartLimit() StartLimit {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.starts.on {
		return StartLimit{}
	}
	return g.starts.limit(g.clock.Now())
}

// SetIdentifyWindow sets how long one rate-limit key waits between
// identifies (Discord's 5 seconds), for tests about something else that
// restart a bot often.
func (g *Gateway) SetIdentifyWindow(d time.Duration) error {
	if d <= 0 {
		return errors.New("wsgateway: the identify window must be positive")
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.starts.identifyWindow = d
	return nil
}

// SetStartLimit replaces the session start limit, as Discord changes it
// for a bot (a larger bot gets more starts and a higher max_concurrency):
// Remaining starts are left until ResetAfter from now, then Total.
func (g *Gateway) SetStartLimit(l StartLimit) error {
	if l.Total < 1 || l.Remaining < 0 || l.Remaining > l.Total || l.ResetAfter < 0 || l.MaxConcurrency < 1 {
		return errors.New("wsgateway: a start limit needs total ≥ 1, 0 ≤ remaining ≤ total, reset_after ≥ 0 and max_concurrency ≥ 1")
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.clock.Now()
	g.starts.on = true
	g.starts.total, g.starts.remaining, g.starts.maxConcurrency = l.Total, l.Remaining, l.MaxConcurrency
	g.starts.resetAt = now.Add(l.ResetAfter)
	return nil
}
