package spec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
)

// Rate-limit headers Discord sends. The spec declares the five bucket
// headers; the other three it lacks, so CheckRateLimitHeaders checks them.
const (
	HeaderLimit      = "X-RateLimit-Limit"
	HeaderRemaining  = "X-RateLimit-Remaining"
	HeaderReset      = "X-RateLimit-Reset"
	HeaderResetAfter = "X-RateLimit-Reset-After"
	HeaderBucket     = "X-RateLimit-Bucket"
	HeaderScope      = "X-RateLimit-Scope"
	HeaderGlobal     = "X-RateLimit-Global"
	HeaderRetryAfter = "Retry-After"
)

// edgeBlockMessage starts the message of the header-less 429 that Discord's
// edge sends a client it blocked for too many invalid requests; every other
// 429 body also has code 0, so the message tells them apart.
const edgeBlockMessage = "You are being blocked from accessing our API temporarily"

var bucketHeaders = []string{HeaderLimit, HeaderRemaining, HeaderReset, HeaderResetAfter, HeaderBucket}

// undeclaredHeaders are the rate-limit headers Discord sends that the spec
// does not declare (ignoredHeaders excuses them from the undeclared-header
// check).
var undeclaredHeaders = []string{HeaderScope, HeaderGlobal, HeaderRetryAfter}

// CheckRateLimitHeaders checks what the spec cannot: the rate-limit headers
// and 429 bodies Discord sends. A response either carries all five bucket
// headers, well formed, or none. A 429 is one of three kinds:
//   - per-route (scope user or shared): bucket headers, Retry-After and scope;
//   - global: X-RateLimit-Global: true, scope global, and no bucket headers;
//   - blocked at Discord's edge: no rate-limit headers at all, and a body
//     whose message says the client is blocked.
//
// Every 429 body has code (the spec's RatelimitedResponse is an Error; 0
// unless a limit has its own JSON code), message, retry_after (seconds,
// float) and global, and Retry-After is retry_after rounded up to whole
// seconds.
func CheckRateLimitHeaders(status int, h http.Header, body []byte) error {
	var errs []error
	present := 0
	for _, name := range bucketHeaders {
		if h.Get(name) != "" {
			present++
		}
	}
	if present > 0 {
		errs = append(errs, checkBucketHeaders(h)...)
	}
	if status != http.StatusTooManyRequests {
		for _, name := range []string{HeaderScope, HeaderGlobal} {
			if h.Get(name) != "" {
				errs = append(errs, fmt.Errorf("%s on a %d response; Discord sends it only with 429", name, status))
			}
		}
		return errors.Join(errs...)
	}

	rl, err := parseRateLimitBody(body)
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	scope := h.Get(HeaderScope)
	if scope == "" && strings.HasPrefix(rl.Message, edgeBlockMessage) {
		// Blocked at the edge (Cloudflare): Discord's rate limiter never saw it.
		for _, name := range append(bucketHeaders, undeclaredHeaders...) {
			if h.Get(name) != "" {
				errs = append(errs, fmt.Errorf("edge-blocked 429 carries %s; it must carry no rate-limit headers", name))
			}
		}
		return errors.Join(errs...)
	}

	errs = append(errs, checkRetryAfter(h.Get(HeaderRetryAfter), rl.RetryAfter)...)
	global := h.Get(HeaderGlobal)
	switch {
	case rl.Global:
		if scope != "global" {
			errs = append(errs, fmt.Errorf("global 429 has %s %q, want \"global\"", HeaderScope, scope))
		}
		if global != "true" {
			errs = append(errs, fmt.Errorf("global 429 has %s %q, want \"true\"", HeaderGlobal, global))
		}
		if present > 0 {
			errs = append(errs, errors.New("global 429 carries bucket headers; Discord sends none with the global limit"))
		}
	case scope == "user" || scope == "shared":
		if global != "" {
			errs = append(errs, fmt.Errorf("per-route 429 carries %s %q", HeaderGlobal, global))
		}
		if present == 0 {
			errs = append(errs, fmt.Errorf("%s-scope 429 lacks the bucket headers", scope))
		}
		if scope == "user" && present > 0 && h.Get(HeaderRemaining) != "0" {
			errs = append(errs, fmt.Errorf("user-scope 429 has %s %q, want \"0\"", HeaderRemaining, h.Get(HeaderRemaining)))
		}
	default:
		errs = append(errs, fmt.Errorf("429 has %s %q, want user, shared or global (global body field %v)", HeaderScope, scope, rl.Global))
	}
	return errors.Join(errs...)
}

// checkBucketHeaders checks that all five bucket headers are present and
// well formed.
func checkBucketHeaders(h http.Header) []error {
	var errs []error
	limit, err := headerInt(h, HeaderLimit)
	if err != nil {
		errs = append(errs, err)
	} else if limit < 1 {
		errs = append(errs, fmt.Errorf("%s is %d, want at least 1", HeaderLimit, limit))
	}
	remaining, err := headerInt(h, HeaderRemaining)
	if err != nil {
		errs = append(errs, err)
	} else if remaining < 0 || (limit >= 1 && remaining > limit) {
		errs = append(errs, fmt.Errorf("%s is %d, want 0..%s", HeaderRemaining, remaining, h.Get(HeaderLimit)))
	}
	for _, name := range []string{HeaderReset, HeaderResetAfter} {
		if _, err := headerSeconds(h, name); err != nil {
			errs = append(errs, err)
		}
	}
	if h.Get(HeaderBucket) == "" {
		errs = append(errs, fmt.Errorf("%s is missing", HeaderBucket))
	}
	return errs
}

func headerInt(h http.Header, name string) (int, error) {
	raw := h.Get(name)
	if raw == "" {
		return 0, fmt.Errorf("%s is missing", name)
	}
	n, err := strconv.Atoi(raw)
	if err != nil {
		return 0, fmt.Errorf("%s %q is not an integer", name, raw)
	}
	return n, nil
}

// headerSeconds parses a non-negative decimal number of seconds, the format
// of X-RateLimit-Reset (epoch) and X-RateLimit-Reset-After (duration).
func headerSeconds(h http.Header, name string) (float64, error) {
	raw := h.Get(name)
	if raw == "" {
		return 0, fmt.Errorf("%s is missing", name)
	}
	f, err := strconv.ParseFloat(raw, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
		return 0, fmt.Errorf("%s %q is not a non-negative number of seconds", name, raw)
	}
	return f, nil
}

func checkRetryAfter(raw string, retryAfter float64) []error {
	if raw == "" {
		return []error{fmt.Errorf("429 lacks %s", HeaderRetryAfter)}
	}
	secs, err := strconv.Atoi(raw)
	if err != nil || secs < 0 {
		return []error{fmt.Errorf("%s %q is not whole seconds", HeaderRetryAfter, raw)}
	}
	if want := int(math.Ceil(retryAfter)); secs != want {
		return []error{fmt.Errorf("%s is %d, want retry_after %g rounded up, %d", HeaderRetryAfter, secs, retryAfter, want)}
	}
	return nil
}

type rateLimitBody struct {
	Code       int
	Message    string
	RetryAfter float64
	Global     bool
}

// parseRateLimitBody checks the fields every 429 body has. The edge block's
// body has them too, so clients parse every 429 the same way.
func parseRateLimitBody(body []byte) (rateLimitBody, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil || raw == nil {
		return rateLimitBody{}, errors.New("429 body is not a JSON object")
	}
	var rl rateLimitBody
	var errs []error
	field := func(name string, dst any, want string) {
		v, ok := raw[name]
		if !ok {
			errs = append(errs, fmt.Errorf("429 body lacks %q", name))
			return
		}
		dec := json.NewDecoder(bytes.NewReader(v))
		if err := dec.Decode(dst); err != nil || bytes.Equal(v, []byte("null")) {
			errs = append(errs, fmt.Errorf("429 body field %q is %s, want %s", name, v, want))
		}
	}
	field("message", &rl.Message, "a string")
	field("retry_after", &rl.RetryAfter, "a number of seconds")
	field("global", &rl.Global, "a boolean")
	if rl.RetryAfter < 0 {
		errs = append(errs, fmt.Errorf("429 body retry_after is %g, want at least 0", rl.RetryAfter))
	}
	field("code", &rl.Code, "an integer")
	return rl, errors.Join(errs...)
}
