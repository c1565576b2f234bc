// Package work is herald's job runtime on River: the lanes every job runs
// in with their workers and timeouts, the registry features add their
// kinds to, the client that works them, and what a job's outcome means
// (rate-limited, failed for good, expired). The fast path's durable
// outbox is internal/outbox; objects kept in step with Discord one
// revision at a time are internal/synctarget.
package work

import (
	"context"
	"fmt"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

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

// LaneWorkers is the worker count of each lane.
type LaneWorkers struct {
	Interactive int
	Events      int
	Sync        int
	Background  int
}

// LaneTimeouts is the longest one attempt of a job may run, per lane.
type LaneTimeouts struct {
	Interactive time.Duration
	Events      time.Duration
	Sync        time.Duration
	Background  time.Duration
}

// String lists the timeouts as HERALD_JOB_TIMEOUT takes them.
func (t LaneTimeouts) String() string {
	return fmt.Sprintf("interactive=%s,events=%s,sync=%s,background=%s", t.Interactive, t.Events, t.Sync, t.Background)
}

// DefaultJobTimeouts: member-facing work is quick or pointless, a ticket's
// transcript may page through thousands of messages.
var DefaultJobTimeouts = LaneTimeouts{Interactive: time.Minute, Events: 5 * time.Minute, Sync: 2 * time.Minute, Background: 2 * time.Minute}

// Total is the workers of every lane together.
func (l LaneWorkers) Total() int { return l.Interactive + l.Events + l.Sync + l.Background }

// Lanes lists every lane in order of precedence.
func Lanes() []Lane { return []Lane{Interactive, Events, Sync, Background} }

// Queues is River's queue configuration for the lanes.
func Queues(w LaneWorkers) map[string]river.QueueConfig {
	return map[string]river.QueueConfig{
		string(Interactive): {MaxWorkers: w.Interactive, FetchCooldown: fetchCooldown, FetchPollInterval: interactivePoll},
		string(Events):      {MaxWorkers: w.Events, FetchCooldown: fetchCooldown},
		string(Sync):        {MaxWorkers: w.Sync, FetchCooldown: fetchCooldown},
		string(Background):  {MaxWorkers: w.Background, FetchCooldown: fetchCooldown},
	}
}

// River announces an insert to the producers (LISTEN/NOTIFY) at most once
// per client, queue and client FetchCooldown; a job inserted inside that
// window after a fetch waits for the next poll, a second by default.
// Sequential clicks or commands 20-90 ms apart met it: every other reply
// came 0.8-0.9 s late. So the client announces inserts up to every
// notifyCooldown, while each lane's producer still fetches at most every
// fetchCooldown (River's default), and the interactive lane, where a
// member waits, also polls every interactivePoll.
const (
	notifyCooldown  = 10 * time.Millisecond
	fetchCooldown   = river.FetchCooldownDefault
	interactivePoll = 250 * time.Millisecond
)

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

// laneCalls puts the job's lane priority, MaxHold and the lane's timeout
// into the context of every job, so no worker can forget them.
type laneCalls struct {
	river.MiddlewareDefaults
	timeouts LaneTimeouts
}

func (l *laneCalls) Work(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) error {
	lane := LaneOf(job.Queue)
	ctx, cancel := context.WithTimeout(ctx, timeout(l.timeouts, lane))
	defer cancel()
	ctx = transport.WithPriority(ctx, lane.Priority())
	return doInner(transport.WithMaxWait(ctx, MaxHold))
}

// timeout is how long one attempt of a job in lane may run.
func timeout(t LaneTimeouts, lane Lane) time.Duration {
	switch lane {
	case Interactive:
		return t.Interactive
	case Sync:
		return t.Sync
	case Background:
		return t.Background
	default:
		return t.Events
	}
}

// backstop is the timeout River itself holds a job of lane to, and after
// which its rescuer runs the job again when its process died: the lane's
// timeout with a margin, so a job that just hit its own deadline is not
// rescued while it returns.
func backstop(t LaneTimeouts, lane Lane) time.Duration {
	d := timeout(t, lane)
	return d + min(max(d/2, time.Second), time.Minute)
}
