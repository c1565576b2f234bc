// Package work is herald's durable job layer on River: the lanes every job
// runs in and the client that works them. Later it also holds job intents,
// idempotency keys and message budgets (see DESIGN.md).
package work

import (
	"github.com/riverqueue/river"

	"github.com/herald-bot/herald/internal/config"
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
