package outbox

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/herald-bot/herald/internal/work"
)

// Retention of herald's bookkeeping. Discord replays an interaction
// within minutes (RESUME), so a day of ledger is ample; an interaction's
// token, and so its message budget, lives 15 minutes (work.TokenLife). The
// job runs every few minutes so an expired token is not kept long.
const (
	ledgerRetention   = 24 * time.Hour
	messagesRetention = time.Hour
	pruneEvery        = 5 * time.Minute
)

// pruneArgs is herald's own housekeeping job.
type pruneArgs struct{}

func (pruneArgs) Kind() string { return "herald_prune" }

type pruneWorker struct {
	river.WorkerDefaults[pruneArgs]
	db *pgxpool.Pool
}

// Work forgets expired interaction tokens and deletes ledger and
// message-budget rows past their retention, so those tables stay as
// small as the traffic of the last day.
func (w *pruneWorker) Work(ctx context.Context, _ *river.Job[pruneArgs]) error {
	if _, err := w.db.Exec(ctx, `UPDATE interaction_ledger SET token = NULL
		WHERE token IS NOT NULL AND created_at < now() - make_interval(secs => $1)`, work.TokenLife.Seconds()); err != nil {
		return fmt.Errorf("outbox: forget tokens: %w", err)
	}
	for _, q := range []struct {
		table string
		keep  time.Duration
	}{{"interaction_ledger", ledgerRetention}, {"interaction_messages", messagesRetention}} {
		if _, err := w.db.Exec(ctx, "DELETE FROM "+q.table+" WHERE created_at < now() - make_interval(secs => $1)", q.keep.Seconds()); err != nil {
			return fmt.Errorf("outbox: prune %s: %w", q.table, err)
		}
	}
	return nil
}

// Housekeeping registers the job that keeps the ledger and the message
// budgets small: every pruneEvery and once at start, in the background
// lane. herald registers it once, with its own kinds.
func Housekeeping(r *work.Registry, db *pgxpool.Pool) {
	work.Register(r, &pruneWorker{db: db})
	r.Periodic(river.NewPeriodicJob(river.PeriodicInterval(pruneEvery), func() (river.JobArgs, *river.InsertOpts) {
		return pruneArgs{}, &river.InsertOpts{Queue: string(work.Background)}
	}, &river.PeriodicJobOpts{RunOnStart: true, ID: "herald_prune"}))
}
