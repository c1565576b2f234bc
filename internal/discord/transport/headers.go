package transport

import (
	"encoding/json"
	"math"
	"net/http"
	"strconv"
	"time"
)

// bucketHeaders is what one response says about its bucket.
type bucketHeaders struct {
	ok         bool // the response carried bucket headers at all
	hash       string
	limit      int
	remaining  int
	resetAfter time.Duration
}

// parseBucketHeaders reads X-RateLimit-*. Only the relative Reset-After is
// used: the absolute Reset would trust the local clock against Discord's.
func parseBucketHeaders(h http.Header) bucketHeaders {
	var b bucketHeaders
	rem, err1 := strconv.Atoi(h.Get("X-RateLimit-Remaining"))
	after, err2 := strconv.ParseFloat(h.Get("X-RateLimit-Reset-After"), 64)
	if err1 != nil || err2 != nil {
		return b
	}
	b.ok = true
	b.remaining = rem
	b.resetAfter = seconds(after)
	b.limit, _ = strconv.Atoi(h.Get("X-RateLimit-Limit"))
	b.hash = h.Get("X-RateLimit-Bucket")
	return b
}

// tooMany is what a 429 says.
type tooMany struct {
	scope      string // user, shared, global, or edge for a header-less block
	retryAfter time.Duration
}

// parse429 reads a 429 answer. retry_after in the body is exact (float
// seconds); Retry-After is whole seconds rounded up and only the fallback.
// A 429 without any X-RateLimit header comes from the edge (Cloudflare),
// not the API: the whole bot must stop.
func parse429(h http.Header, body []byte) tooMany {
	var b struct {
		RetryAfter *float64 `json:"retry_after"`
		Global     bool     `json:"global"`
	}
	_ = json.Unmarshal(body, &b) // an edge block may not even be JSON
	t := tooMany{scope: h.Get("X-RateLimit-Scope")}
	switch {
	case b.RetryAfter != nil:
		t.retryAfter = seconds(*b.RetryAfter)
	default:
		if s, err := strconv.ParseFloat(h.Get("Retry-After"), 64); err == nil {
			t.retryAfter = seconds(s)
		}
	}
	global := h.Get("X-RateLimit-Global") == "true" || b.Global
	switch {
	case global:
		t.scope = "global"
	case t.scope == "" && h.Get("X-RateLimit-Bucket") == "" && h.Get("X-RateLimit-Limit") == "":
		t.scope = "edge"
	case t.scope == "":
		t.scope = "user"
	}
	return t
}

// seconds converts Discord's float seconds to a duration, rounding up to the
// millisecond so a wait is never shorter than asked.
func seconds(s float64) time.Duration {
	if s <= 0 || math.IsNaN(s) {
		return 0
	}
	return time.Duration(math.Ceil(s*1000)) * time.Millisecond
}
