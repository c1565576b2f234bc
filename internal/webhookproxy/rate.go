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
	posts, bytes *callerLimits
	bytesBurst   int64
}

// rateBurst is how many seconds of its rate a caller may post at once.
const rateBurst = 10

func newRates(perSecond float64, bytesPerS, maxBytes int64) *rates {
	burst := max(maxBytes, bytesPerS)
	return &rates{posts: newCallerLimits(perSecond, int(math.Ceil(perSecond*rateBurst))),
		bytes: newCallerLimits(float64(bytesPerS), int(burst)), bytesBurst: burst}
}

// admit takes one post of caller's, or returns Discord's 429 with how
// long to wait.
func (r *rates) admit(caller string, now time.Time) *execute.Error {
	return take(r.posts.of(caller), 1, now)
}

// admitBytes takes n body bytes of caller's, before the body is read
// when its length is declared, else once it is.
func (r *rates) admitBytes(caller string, n int64, now time.Time) *execute.Error {
	return take(r.bytes.of(caller), int(min(n, r.bytesBurst)), now)
}

// callerLimits is one token bucket per caller, made at its first use.
type callerLimits struct {
	perSecond rate.Limit
	burst     int
	mu        sync.Mutex
	by        map[string]*rate.Limiter
}

func newCallerLimits(perSecond float64, burst int) *callerLimits {
	return &callerLimits{perSecond: rate.Limit(perSecond), burst: burst, by: map[string]*rate.Limiter{}}
}

// of is caller's bucket.
func (c *callerLimits) of(caller string) *rate.Limiter {
	c.mu.Lock()
	defer c.mu.Unlock()
	l, ok := c.by[caller]
	if !ok {
		l = rate.NewLimiter(c.perSecond, c.burst)
		c.by[caller] = l
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
