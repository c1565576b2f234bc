package sim

import (
	"net/http"
	"regexp"
	"strconv"
	"time"
)

// validUserAgent is Discord's required User-Agent: "DiscordBot ($url,
// $versionNumber)", to which clients may append more (Discord's
// reference, "HTTP API: User Agent").
var validUserAgent = regexp.MustCompile(`^DiscordBot \([^,\s][^,]*, [^)\s][^)]*\)`)

// codeEdgeBlocked is what Discord's Cloudflare answers a request it blocks,
// such as one without a valid User-Agent (opcodes and status codes: 40333
// "Cloudflare is blocking your request"), with the message it really sends.
const codeEdgeBlocked = 40333

var errEdgeBlocked = &apiError{status: http.StatusForbidden, code: codeEdgeBlocked, message: "internal network error"}

// edge runs the checks Discord's Cloudflare makes before the API sees a
// request: the block after too many invalid requests, then the
// User-Agent. A refused request counts as invalid, as every 403 does. The
// lock is held.
func (s *Server) edge(r *http.Request, now time.Time) (response, bool) {
	h := http.Header{}
	if s.invalid.blocked(now) {
		retry, _ := strconv.ParseFloat(formatSeconds(s.invalid.blockedUntil.Sub(now)), 64)
		return response{status: http.StatusTooManyRequests, header: h, body: map[string]any{
			"code":        0,
			"message":     "You are being blocked from accessing our API temporarily due to exceeding our rate limits frequently. Please read our docs at https://discord.com/developers/docs/topics/rate-limits to prevent this moving forward.",
			"retry_after": retry,
			"global":      false,
		}}, true
	}
	if !validUserAgent.MatchString(r.Header.Get("User-Agent")) {
		s.stats.badUserAgent++
		s.countInvalid(now)
		return response{status: errEdgeBlocked.status, header: h, body: errEdgeBlocked.body()}, true
	}
	return response{}, false
}
