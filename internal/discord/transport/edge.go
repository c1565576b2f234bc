package transport

import (
	"fmt"
	"net/http"
	"time"
)

// edgeBlocked holds every request until wait has passed: Discord's edge
// (Cloudflare) blocked the bot. reason says what the edge answered, for
// Health and the log. The lock is held.
func (e *Engine) edgeBlocked(now time.Time, wait time.Duration, reason string) {
	if until := now.Add(wait); until.After(e.edgeUntil) {
		e.edgeUntil, e.edgeReason = until, reason
	}
	e.log.Error("ALERT: Discord's edge (Cloudflare) blocked herald; all REST waits", "reason", reason, "wait", wait)
}

// edgeWait is how long a header-less 429 holds every request: what it
// asked for, or EdgeBlockWait when it named no wait, never nothing.
func (e *Engine) edgeWait(route string, asked time.Duration) (time.Duration, string) {
	if asked > 0 {
		return asked, fmt.Sprintf("a header-less 429 on %s, retry after %s", route, asked)
	}
	return e.cfg.EdgeBlockWait, fmt.Sprintf("a header-less 429 on %s named no wait; herald waits %s", route, e.cfg.EdgeBlockWait)
}

// blockedBy describes a 403 the edge answered (class Blocked).
func blockedBy(api *APIError) string {
	if api.HTML {
		return fmt.Sprintf("%d %s on %s as an HTML page, not Discord's JSON", api.Status, http.StatusText(api.Status), api.Route)
	}
	return fmt.Sprintf("%d %s on %s (code %d: %s; check the User-Agent)", api.Status, http.StatusText(api.Status), api.Route, api.Code, api.Message)
}
