// Package outbox is the fast path's durability: the ledger of idempotency
// keys <event>:<route_version>:<intent> (DESIGN.md), the interaction's
// outbox row that holds its jobs until its answer is out, the group
// writer that commits many interactions in one statement, and the
// dispatcher that moves outbox rows into River, each exactly once.
package outbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
)

// Hold is how long work enqueued on the fast path waits for its
// interaction's answer before it runs anyway. The fast path releases it
// once the answer is sent, so follow-ups never overtake the answer, and a
// crash between commit and answer still leaves the work to run.
const Hold = 3 * time.Second

// The fast path does not insert River jobs. River's insert (a wide row,
// GIN indexes on args and metadata) costs more than the rest of the
// interaction's work together, and the answer would wait for it. A Batch
// writes the jobs into the interaction's outbox row, in the same
// statement as its ledger row; the Dispatcher moves outbox rows into
// River in batches once the answer is out (or the hold has passed), each
// row exactly once.

// outboxJob is one job as the outbox keeps it until it is dispatched.
type outboxJob struct {
	Kind        string          `json:"kind"`
	Args        json.RawMessage `json:"args"`
	Queue       string          `json:"queue,omitempty"`
	Priority    int             `json:"priority,omitempty"`
	MaxAttempts int             `json:"max_attempts,omitempty"`
	Metadata    json.RawMessage `json:"metadata,omitempty"`
	Tags        []string        `json:"tags,omitempty"`
	ScheduledAt time.Time       `json:"scheduled_at,omitzero"`
}

// Batch is the work one interaction enqueues under one key: its ledger
// entry and its jobs, encoded and checked, ready to be written.
type Batch struct {
	entry Entry
	jobs  []outboxJob
}

// NewBatch encodes jobs for the outbox under e, refusing what River
// could not insert later.
func NewBatch(e Entry, jobs ...river.InsertManyParams) (Batch, error) {
	b := Batch{entry: e, jobs: make([]outboxJob, len(jobs))}
	for i, j := range jobs {
		var err error
		if b.jobs[i], err = encodeJob(j); err != nil {
			return Batch{}, fmt.Errorf("outbox: enqueue %s: %w", e.Key, err)
		}
	}
	return b, nil
}

// Jobs is how many jobs b holds.
func (b Batch) Jobs() int { return len(b.jobs) }

// Key is the idempotency key b is recorded under.
func (b Batch) Key() Key { return b.entry.Key }

// Insert records b's entry in the ledger and its jobs in the outbox, in
// one statement: on its own (autocommit) or in a transaction q is part
// of. When the key is already recorded it reports inserted=false — a
// replay — and writes nothing. The caller answers the interaction, then
// releases the returned outbox row to the Dispatcher.
func (b Batch) Insert(ctx context.Context, q Querier) (outboxID int64, inserted bool, err error) {
	err = q.QueryRow(ctx, `WITH recorded AS (
			INSERT INTO interaction_ledger (idempotency_key, event_id, token) VALUES ($1, $2, NULLIF($3, ''))
			ON CONFLICT DO NOTHING RETURNING event_id)
		INSERT INTO interaction_outbox (idempotency_key, interaction_id, release_at, jobs)
		SELECT $1, event_id, now() + make_interval(secs => $4), $5 FROM recorded
		RETURNING id`, b.entry.Key.String(), b.entry.Key.Event, b.entry.Token, Hold.Seconds(), b.jobs).Scan(&outboxID)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("outbox: enqueue %s: %w", b.entry.Key, err)
	}
	return outboxID, true, nil
}

// encodeJob keeps what River needs to insert j later: its kind, its args
// as JSON and its insert options, those the args declare (InsertOpts)
// overridden by those given, as River merges them.
func encodeJob(j river.InsertManyParams) (outboxJob, error) {
	args, err := json.Marshal(j.Args)
	if err != nil {
		return outboxJob{}, fmt.Errorf("%s: encode args: %w", j.Args.Kind(), err)
	}
	var opts river.InsertOpts
	if withOpts, ok := j.Args.(river.JobArgsWithInsertOpts); ok {
		opts = withOpts.InsertOpts()
	}
	if o := j.InsertOpts; o != nil {
		if o.Queue != "" {
			opts.Queue = o.Queue
		}
		if o.Priority != 0 {
			opts.Priority = o.Priority
		}
		if o.MaxAttempts != 0 {
			opts.MaxAttempts = o.MaxAttempts
		}
		if o.Metadata != nil {
			opts.Metadata = o.Metadata
		}
		if o.Tags != nil {
			opts.Tags = o.Tags
		}
		if !o.ScheduledAt.IsZero() {
			opts.ScheduledAt = o.ScheduledAt
		}
		if u := o.UniqueOpts; u.ByArgs || u.ByPeriod != 0 || u.ByQueue || len(u.ByState) > 0 {
			return outboxJob{}, fmt.Errorf("%s: unique jobs cannot be enqueued on the fast path: the ledger already makes its work unique", j.Args.Kind())
		}
	}
	return outboxJob{Kind: j.Args.Kind(), Args: args, Queue: opts.Queue, Priority: opts.Priority, MaxAttempts: opts.MaxAttempts,
		Metadata: opts.Metadata, Tags: opts.Tags, ScheduledAt: opts.ScheduledAt}, nil
}

// params turns an outbox job back into River's insert parameters.
func (j outboxJob) params() river.InsertManyParams {
	return river.InsertManyParams{Args: rawArgs{kind: j.Kind, args: j.Args}, InsertOpts: &river.InsertOpts{
		Queue: j.Queue, Priority: j.Priority, MaxAttempts: j.MaxAttempts, Metadata: j.Metadata, Tags: j.Tags, ScheduledAt: j.ScheduledAt,
	}}
}

// rawArgs inserts args already encoded, under their kind.
type rawArgs struct {
	kind string
	args json.RawMessage
}

func (a rawArgs) Kind() string                 { return a.kind }
func (a rawArgs) MarshalJSON() ([]byte, error) { return a.args, nil }
