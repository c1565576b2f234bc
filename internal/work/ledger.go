package work

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
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

// Entry is one row of the ledger: the key, and the interaction's token,
// which follow-ups read from here rather than from job args, where River
// would keep (and River UI show) it long after Discord's 15 minutes. The
// housekeeping job forgets tokens once they expire.
type Entry struct {
	Key   Key
	Token string
}

// Hold is how long jobs enqueued on the fast path wait for their
// interaction's initial response before they run anyway. Release ends the
// wait once the response is sent, so follow-ups never overtake it, and a
// crash between commit and response still leaves the work to run.
const Hold = 3 * time.Second

// Enqueue inserts jobs in tx, held for Hold, and records e in the ledger
// with their ids. When the key is already recorded it reports
// inserted=false — a replay — and the caller must roll tx back, which
// takes the jobs with it. The caller commits tx, answers the interaction,
// then calls Release with the returned ids.
func Enqueue(ctx context.Context, tx pgx.Tx, c *Client, e Entry, jobs ...river.InsertManyParams) (ids []int64, inserted bool, err error) {
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
		return nil, false, fmt.Errorf("work: enqueue %s: %w", e.Key, err)
	}
	for _, r := range res {
		ids = append(ids, r.Job.ID)
	}
	if inserted, err = Record(ctx, tx, e, ids); err != nil || !inserted {
		return nil, false, err
	}
	return ids, true, nil
}

// Record writes e in the ledger in tx with the jobs it caused. A key
// already recorded reports inserted=false; a concurrent transaction
// recording the same key makes this one wait for its outcome first.
func Record(ctx context.Context, tx pgx.Tx, e Entry, jobIDs []int64) (inserted bool, err error) {
	if jobIDs == nil {
		jobIDs = []int64{}
	}
	tag, err := tx.Exec(ctx, `INSERT INTO interaction_ledger (idempotency_key, event_id, job_ids, token) VALUES ($1, $2, $3, NULLIF($4, ''))
		ON CONFLICT DO NOTHING`, e.Key.String(), e.Key.Event, jobIDs, e.Token)
	if err != nil {
		return false, fmt.Errorf("work: ledger %s: %w", e.Key, err)
	}
	return tag.RowsAffected() == 1, nil
}

// ErrTokenExpired means an interaction's token is no longer known: Discord
// accepts it for 15 minutes, and the ledger forgets it then.
var ErrTokenExpired = errors.New("work: the interaction's token has expired")

// TokenLife is how long Discord accepts an interaction's token.
const TokenLife = 15 * time.Minute

// Token reads the token of interaction eventID from the ledger.
func Token(ctx context.Context, db Querier, eventID string) (string, error) {
	var token string
	err := db.QueryRow(ctx, `SELECT token FROM interaction_ledger WHERE event_id = $1 AND token IS NOT NULL
		AND created_at > now() - make_interval(secs => $2) LIMIT 1`, eventID, TokenLife.Seconds()).Scan(&token)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", ErrTokenExpired
	}
	if err != nil {
		return "", fmt.Errorf("work: token of %s: %w", eventID, err)
	}
	return token, nil
}

// Recorded reports whether any key of the event is in the ledger: the
// event was handled before, whatever its route version or intent.
func Recorded(ctx context.Context, db Querier, eventID string) (bool, error) {
	var found bool
	if err := db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM interaction_ledger WHERE event_id = $1)`, eventID).Scan(&found); err != nil {
		return false, fmt.Errorf("work: ledger %s: %w", eventID, err)
	}
	return found, nil
}

// Execer runs one statement: a pool, a connection or a transaction.
type Execer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// Querier reads one row: a pool, a connection or a transaction.
type Querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// Release makes held jobs available at once and wakes River's producers
// for their queues, so the work starts right after the answer. Only jobs
// still held — scheduled and never attempted — are touched: a job whose
// hold ended and that already ran, or was cancelled, stays as it is.
// (River's JobRetry would make a finished job run again.) A failed
// Release costs nothing but the rest of the hold.
func Release(ctx context.Context, db Execer, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	_, err := db.Exec(ctx, `WITH released AS (
			UPDATE river_job SET state = 'available', scheduled_at = now()
			WHERE id = ANY($1) AND state = 'scheduled' AND attempt = 0
			RETURNING queue)
		SELECT pg_notify(current_schema() || '.river_insert', json_build_object('queue', queue)::text)
		FROM (SELECT DISTINCT queue FROM released) q`, ids)
	if err != nil {
		return fmt.Errorf("work: release jobs %v: %w", ids, err)
	}
	return nil
}
