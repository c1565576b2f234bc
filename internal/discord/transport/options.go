package transport

import (
	"context"
	"time"
)

// Priority orders requests inside one bucket. Lower goes first; aging
// (Config.AgingStep) lets a request of a lower priority overtake once it
// has waited long enough, so background work always progresses.
type Priority int

const (
	PriorityInteractive Priority = iota // member-facing follow-ups and role toggles
	PriorityEvents                      // ticket lifecycle, webhook deliveries
	PrioritySync                        // revisions of saved objects
	PriorityBackground                  // decorative views
)

type ctxKey int

const (
	priorityKey ctxKey = iota
	maxWaitKey
	idempotentKey
)

// WithPriority sets the priority of requests made with ctx; the default is
// PriorityEvents.
func WithPriority(ctx context.Context, p Priority) context.Context {
	return context.WithValue(ctx, priorityKey, p)
}

// WithMaxWait bounds how long a request made with ctx may wait for a rate
// limit. When its bucket or the global gate would make it wait longer, the
// transport returns a *RateLimitedError at once, so a job can snooze instead
// of holding a worker.
func WithMaxWait(ctx context.Context, d time.Duration) context.Context {
	return context.WithValue(ctx, maxWaitKey, d)
}

// WithIdempotent marks a POST as safe to resend after a lost answer, for
// example a message create carrying a nonce with enforce_nonce.
func WithIdempotent(ctx context.Context) context.Context {
	return context.WithValue(ctx, idempotentKey, true)
}

func priorityOf(ctx context.Context) Priority {
	if p, ok := ctx.Value(priorityKey).(Priority); ok {
		return p
	}
	return PriorityEvents
}

func maxWaitOf(ctx context.Context) (time.Duration, bool) {
	d, ok := ctx.Value(maxWaitKey).(time.Duration)
	return d, ok
}

func idempotent(ctx context.Context, method string) bool {
	switch method {
	case "GET", "HEAD", "PUT", "DELETE", "OPTIONS":
		return true
	case "PATCH":
		// Discord's PATCH routes set fields to given values; sending the
		// same edit twice leaves the same state.
		return true
	}
	v, _ := ctx.Value(idempotentKey).(bool)
	return v
}
