package cluster

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/jackc/pgx/v5"
)

// rescueJobs hands back the River jobs that processes which died were
// running, once their leases expired: herald names its River client after
// its process (Options.ID), so River's attempted_by says whose they were.
// River's own rescuer would rerun them only after the longest job timeout
// (minutes); herald's jobs are safe to run again (idempotency keys, and
// calls whose outcome is unknown are reconciled), which is all the
// rescuer assumes too. A job out of attempts is discarded, as River
// does. Any live process may run this; the row lock makes it once.
func rescueJobs(ctx context.Context, tx pgx.Tx, log *slog.Logger) error {
	var jobs, processes int
	err := tx.QueryRow(ctx, `WITH dead AS (
			UPDATE herald_processes SET jobs_rescued = true
			WHERE id IN (SELECT id FROM herald_processes WHERE lease_until < now() AND NOT jobs_rescued FOR UPDATE SKIP LOCKED)
			RETURNING id),
		rescued AS (
			UPDATE river_job SET
				state = CASE WHEN attempt < max_attempts THEN 'available' ELSE 'discarded' END::river_job_state,
				scheduled_at = now(),
				finalized_at = CASE WHEN attempt < max_attempts THEN NULL ELSE now() END,
				errors = array_append(errors, jsonb_build_object('at', now(), 'attempt', attempt, 'trace', '',
					'error', 'the herald process running this job died (its lease expired); rerun by the cluster'))
			WHERE state = 'running' AND attempted_by[cardinality(attempted_by)] IN (SELECT id FROM dead)
			RETURNING 1)
		SELECT (SELECT count(*) FROM rescued), (SELECT count(*) FROM dead)`).Scan(&jobs, &processes)
	if err != nil {
		return fmt.Errorf("cluster: rescue a dead process's jobs: %w", err)
	}
	if jobs > 0 {
		log.InfoContext(ctx, "cluster: rerunning the jobs of processes that died", "jobs", jobs, "processes", processes)
	}
	return nil
}
