package bulk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/herald-bot/herald/internal/bulk/progress"
	"github.com/herald-bot/herald/internal/discord/transport"
	"github.com/herald-bot/herald/internal/work"
)

// runArgs is an action's runner: it plans the action, then carries out
// its tasks one at a time, in order. One runner per action, so tasks of
// one action never race each other for Discord's budget.
type runArgs struct {
	ActionID int64 `json:"action_id"`
}

func (runArgs) Kind() string { return "bulk_run" }

// workSlice bounds one run: the runner then yields its worker and goes on
// at once, so a long action never nears its lane's timeout.
const workSlice = 30 * time.Second

// awaitPoll is how often a task waiting for its sync looks again.
const awaitPoll = time.Second

type runner struct {
	river.WorkerDefaults[runArgs]
	a *Actions
}

// task is one task row, as the runner reads it.
type task struct {
	Task
	seq          int
	state        string
	until        *time.Time
	syncTarget   *string
	syncRevision *int64
}

func (w *runner) Work(ctx context.Context, j *river.Job[runArgs]) error {
	act, k, err := w.a.load(ctx, j.Args.ActionID)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	if !act.planned {
		if err := w.plan(ctx, act, k); err != nil {
			return err
		}
	}
	slice := time.Now().Add(workSlice)
	for time.Now().Before(slice) {
		t, err := w.next(ctx, act.ID)
		if errors.Is(err, pgx.ErrNoRows) {
			return w.a.change(ctx, act.ID, `UPDATE bulk_actions SET finished_at = now() WHERE id = $1 AND finished_at IS NULL`, act.ID)
		}
		if err != nil {
			return err
		}
		if t.state == "pending" {
			tag, err := w.a.db.Exec(ctx, `UPDATE bulk_tasks SET state = 'running', updated_at = now()
				WHERE action_id = $1 AND seq = $2 AND state = 'pending'`, act.ID, t.seq)
			if err != nil {
				return fmt.Errorf("bulk: claim: %w", err)
			}
			if tag.RowsAffected() == 0 {
				continue // cancelled meanwhile
			}
		}
		var done bool
		switch {
		case k.Do != nil:
			err = w.do(ctx, act, k, t)
		case t.syncTarget == nil:
			err = w.request(ctx, act, k, t)
		default:
			done, err = w.await(ctx, act, t)
			if err == nil && !done {
				return river.JobSnooze(awaitPoll)
			}
		}
		if err != nil {
			return err
		}
	}
	return river.JobSnooze(0)
}

// plan lists the action's tasks once.
func (w *runner) plan(ctx context.Context, act *action, k Kind) error {
	tasks, err := k.Plan(ctx, act.Action)
	var refused *Refused
	if errors.As(err, &refused) {
		return w.a.change(ctx, act.ID, `UPDATE bulk_actions SET planned = true, refused = $2, finished_at = now() WHERE id = $1 AND NOT planned`,
			act.ID, refused.Text)
	}
	if err != nil {
		return err
	}
	keys, names := make([]string, len(tasks)), make([]string, len(tasks))
	for i, t := range tasks {
		keys[i], names[i] = t.Key, t.Name
	}
	return w.a.inTx(ctx, act.ID, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE bulk_actions SET planned = true WHERE id = $1 AND NOT planned`, act.ID)
		if err != nil || tag.RowsAffected() == 0 {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO bulk_tasks (action_id, seq, key, name)
			SELECT $1, n, k, nm FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS t(k, nm, n)`, act.ID, keys, names)
		return err
	})
}

// next is the task to work on: one already running (a rerun after a
// crash or a wait for its sync), else the first pending one.
func (w *runner) next(ctx context.Context, actionID int64) (task, error) {
	var t task
	err := w.a.db.QueryRow(ctx, `SELECT seq, key, name, state, until, sync_target, sync_revision FROM bulk_tasks
		WHERE action_id = $1 AND state IN ('pending', 'running') ORDER BY state = 'running' DESC, seq LIMIT 1`, actionID).
		Scan(&t.seq, &t.Key, &t.Name, &t.state, &t.until, &t.syncTarget, &t.syncRevision)
	return t, err
}

// do carries out a task with Discord calls and records how it ended. A
// wait (rate limit, open circuit) puts the task back to pending, so a
// cancel meanwhile takes it, and snoozes the runner; a missing target
// or a rejected request fails the task alone; a missing permission, or
// the kind's refusal, fails every task left, since each would fail the
// same way.
func (w *runner) do(ctx context.Context, act *action, k Kind, t task) error {
	err := k.Do(ctx, act.Action, t.Task)
	if err == nil {
		return w.a.finish(ctx, act.ID, t.seq, "done", "")
	}
	if errors.Is(err, ErrGone) {
		return w.a.finish(ctx, act.ID, t.seq, "failed", work.ReasonTargetMissing)
	}
	var refused *Refused
	if errors.As(err, &refused) {
		return w.a.failRest(ctx, act.ID, progress.RefusedPrefix+refused.Text)
	}
	class, wait := transport.Classify(err)
	switch {
	case class == transport.RateLimited || (class == transport.Transient && wait > 0):
		reason := work.ReasonRateLimited
		if class == transport.Transient {
			reason = work.ReasonUnavailable
		}
		if werr := w.a.change(ctx, act.ID, `UPDATE bulk_tasks SET state = 'pending', reason = $3, until = $4, updated_at = now()
			WHERE action_id = $1 AND seq = $2 AND state = 'running'`, act.ID, t.seq, string(reason), time.Now().Add(wait)); werr != nil {
			return werr
		}
		return err // the work middleware snoozes for exactly the wait
	case class == transport.NotFound:
		return w.a.finish(ctx, act.ID, t.seq, "failed", work.ReasonTargetMissing)
	case class == transport.Invalid:
		return w.a.finish(ctx, act.ID, t.seq, "failed", work.ReasonInvalid)
	case class == transport.Permission:
		return w.a.failRest(ctx, act.ID, string(work.ReasonNeedsPermission))
	}
	// Transient or unknown: River retries with backoff; the task is
	// pending meanwhile, so a cancel still takes it.
	if _, rerr := w.a.db.Exec(ctx, `UPDATE bulk_tasks SET state = 'pending', updated_at = now()
		WHERE action_id = $1 AND seq = $2 AND state = 'running'`, act.ID, t.seq); rerr != nil {
		return errors.Join(err, rerr)
	}
	return err
}

// request asks for a task's sync and records what it waits for, in one
// transaction: a rerun never asks twice.
func (w *runner) request(ctx context.Context, act *action, k Kind, t task) error {
	err := w.a.inTx(ctx, act.ID, func(tx pgx.Tx) error {
		target, revision, err := k.Request(ctx, tx, act.Action, t.Task)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE bulk_tasks SET sync_target = $3, sync_revision = $4, updated_at = now()
			WHERE action_id = $1 AND seq = $2`, act.ID, t.seq, target, revision)
		return err
	})
	if errors.Is(err, ErrGone) {
		return w.a.finish(ctx, act.ID, t.seq, "failed", work.ReasonTargetMissing)
	}
	return err
}

// await looks at a task's sync: done once the target shows the revision
// asked for, failed when its job failed for good, else still running
// (recording a wait Discord imposed on it, for the progress message).
func (w *runner) await(ctx context.Context, act *action, t task) (bool, error) {
	var published int64
	var jobState *string
	var output []byte
	err := w.a.db.QueryRow(ctx, `SELECT s.published_revision, j.state::text, j.metadata->'output'
		FROM sync_targets s LEFT JOIN river_job j ON j.id = COALESCE(s.running_job_id, s.pending_job_id)
		WHERE s.target = $1`, *t.syncTarget).Scan(&published, &jobState, &output)
	if err != nil {
		return false, fmt.Errorf("bulk: await %s: %w", *t.syncTarget, err)
	}
	if published >= *t.syncRevision {
		return true, w.a.finish(ctx, act.ID, t.seq, "done", "")
	}
	var o work.Outcome
	if len(output) > 0 {
		_ = json.Unmarshal(output, &o) // an unreadable outcome shows no reason
	}
	if jobState != nil && (*jobState == "cancelled" || *jobState == "discarded") {
		return true, w.a.finish(ctx, act.ID, t.seq, "failed", cmpReason(o.Reason, work.ReasonRetriesExhausted))
	}
	if o.Until.After(time.Now()) && (t.until == nil || !t.until.Equal(o.Until)) {
		return false, w.a.change(ctx, act.ID, `UPDATE bulk_tasks SET reason = $3, until = $4 WHERE action_id = $1 AND seq = $2`,
			act.ID, t.seq, string(o.Reason), o.Until)
	}
	return false, nil
}

func cmpReason(r, otherwise work.Reason) work.Reason {
	if r == "" || r == work.ReasonRateLimited || r == work.ReasonUnavailable {
		return otherwise
	}
	return r
}
