package worktest_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertest"
	"github.com/riverqueue/river/rivertype"

	"github.com/herald-bot/herald/internal/store/storetest"
	"github.com/herald-bot/herald/internal/testsupport/pgtest"
	"github.com/herald-bot/herald/internal/work"
	"github.com/herald-bot/herald/internal/work/worktest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// A started client works the kinds the test registered: a Counter hears
// of the job it ran.
func TestStartedWorksACounter(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t)
	w := worktest.NewCounter(1)
	c := worktest.Started(t, pool, func(r *work.Registry) { work.Register(r, w) })
	res, err := c.Insert(t.Context(), worktest.CountArgs{N: 1}, &river.InsertOpts{Queue: string(work.Events)})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case id := <-w.Runs:
		if id != res.Job.ID {
			t.Errorf("ran job %d, want %d", id, res.Job.ID)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the counter never ran")
	}
}

// chainArgs is a job that inserts a CountArgs job through River's
// context, as a worker enqueuing follow-up work does.
type chainArgs struct{}

func (chainArgs) Kind() string { return "test_chain" }

type chainWorker struct {
	river.WorkerDefaults[chainArgs]
}

func (chainWorker) Work(ctx context.Context, _ *river.Job[chainArgs]) error {
	_, err := river.ClientFromContext[pgx.Tx](ctx).Insert(ctx, worktest.CountArgs{N: 2}, &river.InsertOpts{Queue: string(work.Events)})
	return err
}

// snoozeArgs is a job that waits for a rate limit.
type snoozeArgs struct{}

func (snoozeArgs) Kind() string { return "test_snooze" }

type snoozeWorker struct {
	river.WorkerDefaults[snoozeArgs]
}

func (snoozeWorker) Work(context.Context, *river.Job[snoozeArgs]) error {
	return river.JobSnooze(time.Minute)
}

// Work runs one attempt under herald's middleware and reports River's
// verdict; what the worker inserted is in the database afterwards.
func TestWorkOneJob(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t)
	t.Run("completes and inserts", func(t *testing.T) {
		res := worktest.Work(t, pool, chainWorker{}, chainArgs{}, nil)
		if res.EventKind != river.EventKindJobCompleted || res.Job.State != rivertype.JobStateCompleted {
			t.Errorf("result %s, job %s; want completed", res.EventKind, res.Job.State)
		}
		rivertest.RequireInserted(t.Context(), t, riverpgxv5.New(pool), worktest.CountArgs{N: 2}, nil)
	})
	t.Run("snoozes", func(t *testing.T) {
		res := worktest.Work(t, pool, snoozeWorker{}, snoozeArgs{}, nil)
		if res.EventKind != river.EventKindJobSnoozed || !res.Job.ScheduledAt.After(time.Now().Add(50*time.Second)) {
			t.Errorf("result %s, scheduled %s; want snoozed a minute", res.EventKind, res.Job.ScheduledAt)
		}
	})
}
