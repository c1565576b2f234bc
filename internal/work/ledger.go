package work

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
)

// Intent is what a job means (DESIGN.md): sync brings an object to its
// newest revision, event publishes one piece of information, view renders
// something someone may look at.
type Intent string

const (
	IntentSync  Intent = "sync"
	IntentEvent Intent = "event"
	IntentView  Intent = "view"
)

// Key is an idempotency key, <event>:<route_version>:<intent>: the same
// interaction handled by the same route version with the same meaning is
// the same work, however often Discord delivers it.
type Key struct {
	Event        string // the interaction (or other event) id
	RouteVersion int
	Intent       Intent
}

func (k Key) String() string {
	return k.Event + ":" + strconv.Itoa(k.RouteVersion) + ":" + string(k.Intent)
}

// Hold is how long jobs enqueued on the fast path wait for their
// interaction's initial response before they run anyway. Release ends the
// wait once the response is sent, so follow-ups never overtake it, and a
// crash between commit and response still leaves the work to run.
const Hold = 3 * time.Second

// Enqueue inserts jobs in tx, held for Hold, and records key in the
// ledger with their ids. When the key is already recorded it reports
// inserted=false — a replay — and the caller must roll tx back, which
// takes the jobs with it. The caller commits tx, answers the interaction,
// then calls Release with the returned ids.
func Enqueue(ctx context.Context, tx pgx.Tx, c *Client, key Key, jobs ...river.InsertManyParams) (ids []int64, inserted bool, err error) {
	held := time.Now().Add(Hold)
	params := make([]river.InsertManyParams, len(jobs))
	for i, j := range jobs {
		opts := river.InsertOpts{}
		if j.InsertOpts != nil {
			opts = *j.InsertOpts
		}
		opts.ScheduledAt = held
		params[i] = river.InsertManyParams{Args: j.Args, InsertOpts: &opts}
	}
	res, err := c.InsertManyTx(ctx, tx, params)
	if err != nil {
		return nil, false, fmt.Errorf("work: enqueue %s: %w", key, err)
	}
	for _, r := range res {
		ids = append(ids, r.Job.ID)
	}
	if inserted, err = Record(ctx, tx, key, ids); err != nil || !inserted {
		return nil, false, err
	}
	return ids, true, nil
}

// Record writes key in the ledger in tx with the jobs it caused. A key
// already recorded reports inserted=false; a concurrent transaction
// recording the same key makes this one wait for its outcome first.
func Record(ctx context.Context, tx pgx.Tx, key Key, jobIDs []int64) (inserted bool, err error) {
	if jobIDs == nil {
		jobIDs = []int64{}
	}
	tag, err := tx.Exec(ctx, `INSERT INTO interaction_ledger (idempotency_key, event_id, job_ids) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
		key.String(), key.Event, jobIDs)
	if err != nil {
		return false, fmt.Errorf("work: ledger %s: %w", key, err)
	}
	return tag.RowsAffected() == 1, nil
}

// Recorded reports whether any key of the event is in the ledger: the
// event was handled before, whatever its route version or intent.
func Recorded(ctx context.Context, tx pgx.Tx, eventID string) (bool, error) {
	var found bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM interaction_ledger WHERE event_id = $1)`, eventID).Scan(&found); err != nil {
		return false, fmt.Errorf("work: ledger %s: %w", eventID, err)
	}
	return found, nil
}

// Release makes held jobs available at once.
func Release(ctx context.Context, c *Client, ids []int64) error {
	for _, id := range ids {
		if _, err := c.JobRetry(ctx, id); err != nil {
			return fmt.Errorf("work: release job %d: %w", id, err)
		}
	}
	return nil
}
