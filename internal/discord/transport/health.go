package transport

import (
	"fmt"
	"sort"
	"time"
)

// Health is what stops or holds the engine's requests, for readiness
// probes and the admin status view. It names buckets and routes only by
// their display names and templates: never a token or a URL.
type Health struct {
	Time time.Time
	// Unauthorized: Discord answered 401 to the bot token and all REST has
	// stopped until restart. Reason names the route and Discord's answer.
	Unauthorized       bool
	UnauthorizedSince  time.Time
	UnauthorizedReason string
	// EdgeBlockedUntil is set when Discord's edge (Cloudflare) blocked the
	// bot — a header-less 429, a 403 with code 40333, an HTML page: every
	// request, exempt ones included, waits until then. EdgeBlockedReason
	// says what the edge answered on which route and how long herald
	// waits, Config.EdgeBlockWait when the edge named no wait.
	EdgeBlockedUntil  time.Time
	EdgeBlockedReason string
	// GlobalGateUntil is set by a global 429: requests counted by the
	// global limit wait until then.
	GlobalGateUntil time.Time
	// GlobalShare is the requests per second this process may send of the
	// bot's global limit now: all of it, or its share when processes
	// share the token (Engine.Share), which changes as the remainder
	// takes turns.
	GlobalShare int
	// Failing is how many buckets' requests Discord answered 5xx or not
	// at all among the engine's last attempts; Degraded, at
	// degradedFailures or more, means requests below interactive priority
	// go one at a time (degraded.go).
	Failing  int
	Degraded bool
	// OpenCircuits are the buckets whose breaker is open or half-open.
	OpenCircuits []OpenCircuit
	// InvalidRequests (401, 403, non-shared 429) the bot's own calls
	// caused in the last 10 minutes, against InvalidLimit, at which the
	// engine stops sending them; InvalidBudgets has every budget.
	InvalidRequests int
	InvalidLimit    int
	InvalidBudgets  []InvalidBudget
	// DeadWebhooks is how many webhooks (or tokens of one) Discord said
	// are gone.
	DeadWebhooks int
}

// OpenCircuit is one bucket whose circuit breaker is not closed.
type OpenCircuit struct {
	Bucket              string // display name: hash or route, and a fingerprint of the major parameter
	Route               string // method and template
	State               string // open, half-open
	Since               time.Time
	ConsecutiveFailures int
}

// Err says why the engine cannot send at all now — the bot token was
// rejected, the edge blocks the bot, or the invalid-request budget is
// spent — or is nil. Open circuits and the global gate hold only some
// requests.
func (h Health) Err() error {
	switch {
	case h.Unauthorized:
		return fmt.Errorf("transport: Discord rejected the bot token (%s): REST stopped until restart with a valid token", h.UnauthorizedReason)
	case h.EdgeBlockedUntil.After(h.Time):
		return fmt.Errorf("transport: Discord's edge (Cloudflare) blocked herald: %s; REST waits until %s", h.EdgeBlockedReason, h.EdgeBlockedUntil.Format(time.RFC3339))
	case h.InvalidRequests >= h.InvalidLimit:
		return fmt.Errorf("%d invalid requests in 10 minutes (budget %d): REST paused", h.InvalidRequests, h.InvalidLimit)
	}
	return nil
}

// Health returns the engine's health. It is safe for concurrent use.
func (e *Engine) Health() Health {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.clock.Now()
	budgets := e.invalid.counts(now)
	h := Health{
		Time:         now,
		Unauthorized: e.unauthorized, UnauthorizedSince: e.unauthorizedSince, UnauthorizedReason: e.unauthorizedReason,
		EdgeBlockedUntil: e.edgeUntil, EdgeBlockedReason: e.edgeReason, GlobalGateUntil: e.gateUntil,
		GlobalShare:     int(float64(e.globalShare(now)) / e.cfg.GlobalPeriod.Seconds()),
		InvalidRequests: budgets[budgetBot].Count, InvalidLimit: budgets[budgetBot].Limit, InvalidBudgets: budgets,
		DeadWebhooks: len(e.deadWebhooks), Failing: e.discord.failures(now),
	}
	h.Degraded = degradedWith(h.Failing)
	for _, b := range e.buckets {
		if b.breaker != breakerClosed {
			h.OpenCircuits = append(h.OpenCircuits, OpenCircuit{Bucket: b.name, Route: b.route.Key(),
				State: string(b.breaker), Since: b.openedAt, ConsecutiveFailures: b.failures})
		}
	}
	sort.Slice(h.OpenCircuits, func(i, j int) bool { return h.OpenCircuits[i].Bucket < h.OpenCircuits[j].Bucket })
	return h
}
