// Package synctarget keeps objects herald publishes (a role menu's
// message, a ticket panel) in step with their saved configuration: a save
// requests a sync of the target in its transaction, at most one job per
// target is pending, and the job publishes the newest revision, skipping
// work already visible. Status tells a report where each target stands.
package synctarget

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/herald-bot/herald/internal/work"
)

// syncLease bounds how long a crashed sync blocks its target: after it,
// another job may claim the target.
const syncLease = 5 * time.Minute

// syncBusyWait is how long a sync job snoozes while another job works the
// same target.
const syncBusyWait = time.Second

// Request asks for target to be brought to revision, in tx (the
// caller saves the configuration in the same transaction). There is at
// most one pending job per target: when one exists the request folds into
// it and nothing is inserted, since the job publishes whatever revision is
// newest when it runs. args is the job to insert otherwise.
func Request(ctx context.Context, tx pgx.Tx, c *work.Client, target string, revision int64, args river.JobArgs, opts *river.InsertOpts) (jobID int64, folded bool, err error) {
	var pending *int64
	var live bool
	err = tx.QueryRow(ctx, `
		INSERT INTO sync_targets (target, saved_revision) VALUES ($1, $2)
		ON CONFLICT (target) DO UPDATE SET saved_revision = GREATEST(sync_targets.saved_revision, EXCLUDED.saved_revision)
		RETURNING pending_job_id, COALESCE((SELECT state NOT IN ('completed', 'cancelled', 'discarded')
			FROM river_job WHERE id = sync_targets.pending_job_id), false)`, target, revision).Scan(&pending, &live)
	if err != nil {
		return 0, false, fmt.Errorf("synctarget: sync %s: %w", target, err)
	}
	// A pending job that failed for good (cancelled with a reason, out of
	// retries) takes no more requests: a new one does.
	if pending != nil && live {
		return *pending, true, nil
	}
	res, err := c.InsertTx(ctx, tx, args, opts)
	if err != nil {
		return 0, false, fmt.Errorf("synctarget: sync %s: %w", target, err)
	}
	if _, err := tx.Exec(ctx, `UPDATE sync_targets SET pending_job_id = $2 WHERE target = $1`, target, res.Job.ID); err != nil {
		return 0, false, fmt.Errorf("synctarget: sync %s: %w", target, err)
	}
	return res.Job.ID, false, nil
}

// Publish makes one revision of a target visible on Discord.
type Publish func(ctx context.Context, revision int64) error

// Run is the body of a sync job: claim the target, publish its newest
// saved revision (skipping the work when that is already visible), and
// record exactly the revision published. Work on one target is serial:
// while another job holds it, this one snoozes. No transaction stays open
// while publish talks to Discord. A job run again after its process died
// mid-publish reclaims its own lease, so publish must be idempotent.
func Run(ctx context.Context, db *pgxpool.Pool, jobID int64, target string, publish Publish) error {
	var saved, published int64
	err := db.QueryRow(ctx, `
		UPDATE sync_targets SET pending_job_id = NULLIF(pending_job_id, $2), running_job_id = $2, lease_until = now() + make_interval(secs => $3)
		WHERE target = $1 AND (pending_job_id = $2 AND (running_job_id IS NULL OR lease_until < now())
			-- this job ran before and its process died holding the lease:
			-- the rescued job takes it back
			OR running_job_id = $2)
		RETURNING saved_revision, published_revision`, target, jobID, syncLease.Seconds()).Scan(&saved, &published)
	if errors.Is(err, pgx.ErrNoRows) {
		return claimFailed(ctx, db, jobID, target)
	}
	if err != nil {
		return fmt.Errorf("synctarget: claim %s: %w", target, err)
	}
	if saved <= published {
		return release(ctx, db, jobID, target, 0)
	}
	if err := publish(ctx, saved); err != nil {
		// This job retries (or waits) and stays the one later requests
		// fold into, unless a newer one was queued meanwhile.
		_, rerr := db.Exec(context.WithoutCancel(ctx), `
			UPDATE sync_targets SET running_job_id = NULL, lease_until = NULL, pending_job_id = COALESCE(pending_job_id, $2)
			WHERE target = $1 AND running_job_id = $2`, target, jobID)
		return errors.Join(err, rerr)
	}
	return release(ctx, db, jobID, target, saved)
}

// claimFailed tells a job whose target is busy (snooze and try again)
// from one that was superseded (nothing to do).
func claimFailed(ctx context.Context, db *pgxpool.Pool, jobID int64, target string) error {
	var pending *int64
	err := db.QueryRow(ctx, `SELECT pending_job_id FROM sync_targets WHERE target = $1`, target).Scan(&pending)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("synctarget: claim %s: %w", target, err)
	}
	if pending != nil && *pending == jobID {
		return river.JobSnooze(syncBusyWait)
	}
	return nil
}

// release frees the target and records the published revision (0: none).
func release(ctx context.Context, db *pgxpool.Pool, jobID int64, target string, revision int64) error {
	_, err := db.Exec(context.WithoutCancel(ctx), `
		UPDATE sync_targets SET running_job_id = NULL, lease_until = NULL,
			published_revision = GREATEST(published_revision, $3),
			published_at = CASE WHEN $3 > 0 THEN now() ELSE published_at END
		WHERE target = $1 AND running_job_id = $2`, target, jobID, revision)
	if err != nil {
		return fmt.Errorf("synctarget: release %s: %w", target, err)
	}
	return nil
}

// Visible reports whether target already shows revision, in tx: a caller
// about to request a sync it does not need can skip it.
func Visible(ctx context.Context, tx pgx.Tx, target string, revision int64) (bool, error) {
	var published int64
	err := tx.QueryRow(ctx, `SELECT published_revision FROM sync_targets WHERE target = $1`, target).Scan(&published)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("synctarget: sync %s: %w", target, err)
	}
	return published >= revision, nil
}

// State is what Discord shows of a target: the newest revision
// published, and the job that will publish a newer one (nil: none).
type State struct {
	Published int64
	Job       *int64
}

// Status reads the state of each item's target (named by target), in
// items' order, for a feature's status report: the zero State for a
// target never requested.
func Status[T any](ctx context.Context, db *pgxpool.Pool, items []T, target func(T) string) ([]State, error) {
	targets := make([]string, len(items))
	at := make(map[string]int, len(items))
	for i, it := range items {
		targets[i] = target(it)
		at[targets[i]] = i
	}
	rows, err := db.Query(ctx, `SELECT target, published_revision, COALESCE(running_job_id, pending_job_id)
		FROM sync_targets WHERE target = ANY($1)`, targets)
	if err != nil {
		return nil, fmt.Errorf("synctarget: sync status: %w", err)
	}
	out := make([]State, len(items))
	var name string
	var s State
	if _, err := pgx.ForEachRow(rows, []any{&name, &s.Published, &s.Job}, func() error {
		out[at[name]] = s
		return nil
	}); err != nil {
		return nil, fmt.Errorf("synctarget: sync status: %w", err)
	}
	return out, nil
}

// Job is the args of a sync kind: one target's job.
type Job interface {
	river.JobArgs
	// Target names the target in sync_targets.
	Target() string
}

// Worker is the River worker of a sync kind: Run around Publish,
// which makes the target's newest saved configuration visible.
type Worker[T Job] struct {
	river.WorkerDefaults[T]
	DB      *pgxpool.Pool
	Publish func(ctx context.Context, args T) error
}

// Work implements river.Worker.
func (w *Worker[T]) Work(ctx context.Context, j *river.Job[T]) error {
	return Run(ctx, w.DB, j.ID, j.Args.Target(), func(ctx context.Context, _ int64) error {
		return w.Publish(ctx, j.Args)
	})
}
