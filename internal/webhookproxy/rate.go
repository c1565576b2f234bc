package webhookproxy

import (
	"math"
	"net/http"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/herald-bot/herald/internal/webhookproxy/execute"
)

// rates bound how fast each caller (its key; all keyless callers
// together) may post, in posts and in body bytes: beyond either, with a
// burst of rateBurst seconds' worth of posts and one maximum body (or a
// second's worth of bytes, if more), it
// gets 429 before the body is read, verified or stored. Every post costs
// herald a transaction and its delivery a worker's turn, and every byte
// passes through Postgres's one write-ahead log, so one caller's flood
// would otherwise slow everyone's. The callers are the configured keys,
// so the maps stay small.
type rates struct {
	perSecond           float64
	bytesPerS, maxBytes int64
	mu                  sync.Mutex
	posts, bytes        map[string]*rate.Limiter
}

// rateBurst is how many seconds of its rate a caller may post at once.
const rateBurst = 10

func newRates(perSecond float64, bytesPerS, maxBytes int64) *rates {
	return &rates{perSecond: perSecond, bytesPerS: bytesPerS, maxBytes: maxBytes,
		posts: map[string]*rate.Limiter{}, bytes: map[string]*rate.Limiter{}}
}

// admit takes one post of caller's, or returns Discord's 429 with how
// long to wait.
func (r *rates) admit(caller string, now time.Time) *execute.Error {
	return take(r.limiter(r.posts, caller, r.perSecond, int(math.Ceil(r.perSecond*rateBurst))), 1, now)
}

// admitBytes takes n body bytes of caller's, before the body is read
// when its length is declared, else once it is.
func (r *rates) admitBytes(caller string, n int64, now time.Time) *execute.Error {
	burst := max(r.maxBytes, r.bytesPerS)
	return take(r.limiter(r.bytes, caller, float64(r.bytesPerS), int(burst)), int(min(n, burst)), now)
}

func (r *rates) limiter(by map[string]*rate.Limiter, caller string, perSecond float64, burst int) *rate.Limiter {
	r.mu.Lock()
	defer r.mu.Unlock()
	l, ok := by[caller]
	if !ok {
		l = rate.NewLimiter(rate.Limit(perSecond), burst)
		by[caller] = l
	}
	return l
}

// take reserves n at now, or refuses with the wait.
func take(l *rate.Limiter, n int, now time.Time) *execute.Error {
	res := l.ReserveN(now, n)
	if d := res.DelayFrom(now); d > 0 {
		res.CancelAt(now)
		return &execute.Error{Status: http.StatusTooManyRequests, RetryAfter: math.Max(d.Seconds(), 0.001), Code: codeRateLimited}
	}
	return nil
}

// codeRateLimited marks a 429 for a caller past its rate, counted apart
// from a full queue.
const codeRateLimited = 2
