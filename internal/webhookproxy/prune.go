package webhookproxy

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/herald-bot/herald/internal/work"
)

// pruneEvery is how often delivered deliveries past their retention are
// deleted; pruneBatch bounds one statement, so a backlog after a long
// outage is deleted in short transactions.
const (
	pruneEvery = 10 * time.Minute
	pruneBatch = 10000
)

type pruneArgs struct{}

func (pruneArgs) Kind() string { return "webhookproxy_prune" }

type pruneWorker struct {
	river.WorkerDefaults[pruneArgs]
	db            *pgxpool.Pool
	retention     time.Duration
	deadRetention time.Duration
}

// Work deletes delivered requests — bodies, tokens and Discord's answers —
// older than the retention, dead letters older than theirs, idle queues
// and token verdicts past their time. It also restarts any target left
// with pending deliveries and no job.
func (w *pruneWorker) Work(ctx context.Context, _ *river.Job[pruneArgs]) error {
	if err := revive(ctx, w.db, river.ClientFromContext[pgx.Tx](ctx)); err != nil {
		return err
	}
	return w.prune(ctx)
}

func (w *pruneWorker) prune(ctx context.Context) error {
	for _, p := range []struct {
		state string
		keep  time.Duration
	}{{"delivered", w.retention}, {"dead", w.deadRetention}} {
		for {
			tag, err := w.db.Exec(ctx, `DELETE FROM webhookproxy_deliveries WHERE id IN (
					SELECT id FROM webhookproxy_deliveries
					WHERE state = $3 AND finished_at < now() - make_interval(secs => $1) LIMIT $2)`,
				p.keep.Seconds(), pruneBatch, p.state)
			if err != nil {
				return fmt.Errorf("webhookproxy: prune %s: %w", p.state, err)
			}
			if tag.RowsAffected() < pruneBatch {
				break
			}
		}
	}
	// An idle queue with nothing left in it, such as one of the threads
	// a caller named once, is forgotten; SKIP LOCKED leaves any a writer
	// holds. Verdicts past their time are asked again when next needed.
	if _, err := w.db.Exec(ctx, `DELETE FROM webhookproxy_targets WHERE target IN (
			SELECT t.target FROM webhookproxy_targets t WHERE t.depth = 0 AND t.job_id IS NULL
				AND NOT EXISTS (SELECT 1 FROM webhookproxy_deliveries d WHERE d.target = t.target)
			LIMIT $1 FOR UPDATE SKIP LOCKED)`, pruneBatch); err != nil {
		return fmt.Errorf("webhookproxy: prune idle queues: %w", err)
	}
	if _, err := w.db.Exec(ctx, `DELETE FROM webhookproxy_tokens WHERE checked_at < now() - make_interval(secs => $1)`,
		verdictTTL.Seconds()); err != nil {
		return fmt.Errorf("webhookproxy: prune token verdicts: %w", err)
	}
	return nil
}

// revive gives a drain job to every target with pending deliveries whose
// job ended for good — River gave up on it after repeated database errors
// — so such a target does not wait for its next accepted request.
func revive(ctx context.Context, db *pgxpool.Pool, jobs inserter) error {
	return pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT t.target FROM webhookproxy_targets t LEFT JOIN river_job j ON j.id = t.job_id
			WHERE EXISTS (SELECT 1 FROM webhookproxy_deliveries d WHERE d.target = t.target AND d.state = 'pending')
				AND (j.id IS NULL OR j.state IN ('completed', 'cancelled', 'discarded'))`)
		if err != nil {
			return fmt.Errorf("webhookproxy: revive: %w", err)
		}
		names, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil || len(names) == 0 {
			return err
		}
		locked, err := lockTargets(ctx, tx, names)
		if err != nil {
			return fmt.Errorf("webhookproxy: revive: %w", err)
		}
		// No depth is added: the deliveries were counted when accepted.
		return startDrains(ctx, tx, jobs, map[string]int{}, locked, names...)
	})
}

func pruneJob() *river.PeriodicJob {
	return river.NewPeriodicJob(river.PeriodicInterval(pruneEvery), func() (river.JobArgs, *river.InsertOpts) {
		return pruneArgs{}, &river.InsertOpts{Queue: string(work.Background)}
	}, &river.PeriodicJobOpts{RunOnStart: true, ID: "webhookproxy_prune"})
}
