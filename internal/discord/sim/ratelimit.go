package sim

import (
	"encoding/hex"
	"hash/fnv"
	"math"
	"net/http"
	"strconv"
	"time"
)

// Limit is one rate limit: Requests per Window, before time scaling.
type Limit struct {
	Requests int
	Window   time.Duration
}

// Rate-limit scopes as Discord reports them in X-RateLimit-Scope.
const (
	ScopeUser   = "user"
	ScopeGlobal = "global"
	ScopeShared = "shared"
)

// window is a fixed rate-limit window. Discord opens a window with the first
// request and resets it all at once when the window ends.
type window struct {
	start time.Time
	count int
}

// take counts one request against w if the limit allows it, opening a new
// window when the old one has ended. It returns the remaining requests and
// the reset time of the window the request fell in.
func (w *window) take(now time.Time, limit int, length time.Duration) (remaining int, reset time.Time, ok bool) {
	if w.start.IsZero() || !now.Before(w.start.Add(length)) {
		w.start, w.count = now, 0
	}
	reset = w.start.Add(length)
	if w.count >= limit {
		return 0, reset, false
	}
	w.count++
	return limit - w.count, reset, true
}

// bucketHash is the opaque X-RateLimit-Bucket value of a bucket group.
func bucketHash(group string) string {
	h := fnv.New64a()
	h.Write([]byte("herald-sim/" + group))
	return hex.EncodeToString(h.Sum(nil))
}

// rateState is one outcome of the rate limiter, used to write headers.
type rateState struct {
	limit     int
	remaining int
	reset     time.Time
	bucket    string
}

// formatSeconds writes a wait with Discord's millisecond precision,
// rounded up: a client that waits exactly what it is told must never be
// early.
func formatSeconds(d time.Duration) string {
	ms := math.Ceil(float64(max(d, 0)) / float64(time.Millisecond))
	return strconv.FormatFloat(ms/1000, 'f', 3, 64)
}

func setBucketHeaders(h http.Header, rs rateState, now time.Time) {
	h.Set("X-RateLimit-Limit", strconv.Itoa(rs.limit))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(rs.remaining))
	h.Set("X-RateLimit-Reset", strconv.FormatFloat(float64(rs.reset.UnixMilli())/1000, 'f', 3, 64))
	h.Set("X-RateLimit-Reset-After", formatSeconds(rs.reset.Sub(now)))
	h.Set("X-RateLimit-Bucket", rs.bucket)
}

// rateLimited builds a 429 answer. retry is the wait the client must honour;
// Retry-After carries it rounded up to whole seconds, as Discord does. The
// body is Discord's rate limit response: message, retry_after, global and
// the JSON error code, 0 for the limits the simulator models (the spec's
// RatelimitedResponse is an Error, whose code is required). A shared
// resource limit says so in its message, as the rate-limit docs show.
func rateLimited(h http.Header, scope string, retry time.Duration) map[string]any {
	h.Set("X-RateLimit-Scope", scope)
	h.Set("Retry-After", strconv.Itoa(int(math.Ceil(retry.Seconds()))))
	global := scope == ScopeGlobal
	if global {
		h.Set("X-RateLimit-Global", "true")
	}
	message := "You are being rate limited."
	if scope == ScopeShared {
		message = "The resource is being rate limited."
	}
	retryAfter, _ := strconv.ParseFloat(formatSeconds(retry), 64)
	return map[string]any{"code": codeGeneral, "message": message, "retry_after": retryAfter, "global": global}
}

// invalidRequests counts 401, 403 and non-shared 429 answers in a sliding
// window, the way Cloudflare decides to ban a client.
type invalidRequests struct {
	times        []time.Time
	blockedUntil time.Time
	total        int
}

// add records one invalid request and reports whether the threshold was
// just crossed.
func (iv *invalidRequests) add(now time.Time, window time.Duration, threshold int) bool {
	iv.total++
	cut := 0
	for cut < len(iv.times) && !iv.times[cut].After(now.Add(-window)) {
		cut++
	}
	iv.times = append(iv.times[cut:], now)
	return len(iv.times) >= threshold
}

func (iv *invalidRequests) blocked(now time.Time) bool { return now.Before(iv.blockedUntil) }
