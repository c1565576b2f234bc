// Package work is herald's durable job layer on River: the lanes every job
// runs in and the client that works them. Later it also holds job intents,
// idempotency keys and message budgets (see DESIGN.md).
package work

import (
	"context"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/herald-bot/herald/internal/config"
	"github.com/herald-bot/herald/internal/discord/transport"
)

// Lane is a River queue with its own worker count. River orders jobs by
// priority only inside one queue, so member-facing work gets precedence by
// living in a lane of its own rather than by priority numbers.
type Lane string

const (
	// Interactive holds member-facing follow-ups and role toggles.
	Interactive Lane = "interactive"
	// Events holds ticket lifecycle work and webhook deliveries: never
	// dropped, never merged.
	Events Lane = "events"
	// Sync brings one saved object to its newest revision, coalesced per target.
	Sync Lane = "sync"
	// Background holds decorative views with a deadline; they may be dropped.
	Background Lane = "background"
)

// Lanes lists every lane in order of precedence.
func Lanes() []Lane { return []Lane{Interactive, Events, Sync, Background} }

// Queues is River's queue configuration for the lanes.
func Queues(w config.LaneWorkers) map[string]river.QueueConfig {
	return map[string]river.QueueConfig{
		string(Interactive): {MaxWorkers: w.Interactive},
		string(Events):      {MaxWorkers: w.Events},
		string(Sync):        {MaxWorkers: w.Sync},
		string(Background):  {MaxWorkers: w.Background},
	}
}

// Priority is the transport priority of a lane's Discord calls, so inside
// one bucket member-facing calls go first.
func (l Lane) Priority() transport.Priority {
	switch l {
	case Interactive:
		return transport.PriorityInteractive
	case Sync:
		return transport.PrioritySync
	case Background:
		return transport.PriorityBackground
	default:
		return transport.PriorityEvents
	}
}

// MaxHold is the longest a job holds its worker waiting for a rate limit.
// A longer wait makes the call return a *transport.RateLimitedError at
// once, and the outcome middleware snoozes the job until exactly the
// reset, holding no worker. Shorter waits are held: a snooze costs a
// round through Postgres and River's fetch poll (1 s), more than they do.
const MaxHold = time.Second

// laneCalls puts the job's lane priority and MaxHold into the context of
// every job, so no worker can forget them.
type laneCalls struct{ river.MiddlewareDefaults }

func (*laneCalls) Work(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) error {
	ctx = transport.WithPriority(ctx, Lane(job.Queue).Priority())
	return doInner(transport.WithMaxWait(ctx, MaxHold))
}
