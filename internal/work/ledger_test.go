package work_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/herald-bot/herald/internal/store/storetest"
	"github.com/herald-bot/herald/internal/testsupport/wait"
	"github.com/herald-bot/herald/internal/work"
)

func TestKeyFormat(t *testing.T) {
	t.Parallel()
	k := work.Key{Event: "1234567890", RouteVersion: 2, Intent: work.IntentEvent}
	if k.String() != "1234567890:2:event" {
		t.Errorf("key = %q", k)
	}
}

// The first Enqueue of a key inserts its jobs held; the same key again —
// a replayed interaction — reports it, and rolling back leaves nothing;
// Release makes the jobs available; a rolled-back transaction leaves
// neither ledger row nor job.
func TestEnqueueIsIdempotentAndHeld(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool := storetest.Pool(t)
	c, err := work.NewClient(pool, work.Options{Registry: work.NewRegistry(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	key := work.Key{Event: "42", RouteVersion: 1, Intent: work.IntentEvent}
	job := river.InsertManyParams{Args: blockArgs{Lane: "events"}, InsertOpts: &river.InsertOpts{Queue: string(work.Events)}}
	enqueue := func() ([]int64, bool) {
		tx, err := pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ids, inserted, err := work.Enqueue(ctx, tx, c, work.Entry{Key: key}, job, job)
		if err != nil {
			t.Fatal(err)
		}
		if !inserted {
			tx.Rollback(ctx)
			return ids, inserted
		}
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		return ids, inserted
	}
	ids, inserted := enqueue()
	if !inserted || len(ids) != 2 {
		t.Fatalf("first enqueue: ids %v inserted %v", ids, inserted)
	}
	for _, id := range ids {
		j, err := c.JobGet(ctx, id)
		if err != nil || j.State != rivertype.JobStateScheduled || j.Queue != "events" {
			t.Fatalf("job %d = %+v, %v; want scheduled (held) in events", id, j, err)
		}
	}
	if again, inserted := enqueue(); inserted || len(again) != 0 {
		t.Fatalf("replay inserted %v", again)
	}
	var stored []int64
	if err := pool.QueryRow(ctx, `SELECT job_ids FROM interaction_ledger WHERE idempotency_key = $1`, key.String()).Scan(&stored); err != nil || len(stored) != 2 {
		t.Fatalf("ledger job_ids = %v, %v", stored, err)
	}
	if err := work.Release(ctx, pool, ids); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if j, _ := c.JobGet(ctx, id); j.State != rivertype.JobStateAvailable {
			t.Errorf("released job state = %s", j.State)
		}
	}

	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	other := work.Key{Event: "43", RouteVersion: 1, Intent: work.IntentEvent}
	if _, _, err := work.Enqueue(ctx, tx, c, work.Entry{Key: other}, job); err != nil {
		t.Fatal(err)
	}
	tx.Rollback(ctx)
	var n int
	pool.QueryRow(ctx, `SELECT count(*) FROM interaction_ledger WHERE event_id = '43'`).Scan(&n)
	var jobs int
	pool.QueryRow(ctx, `SELECT count(*) FROM river_job`).Scan(&jobs)
	if n != 0 || jobs != 2 {
		t.Errorf("after rollback: %d ledger rows, %d jobs; want 0 and the first 2", n, jobs)
	}
	tx, err = pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	for event, want := range map[string]bool{"42": true, "43": false} {
		if got, err := work.Recorded(ctx, tx, event); err != nil || got != want {
			t.Errorf("Recorded(%s) = %v, %v; want %v", event, got, err, want)
		}
	}
}

// countArgs is a test job that counts its runs.
type countArgs struct{}

func (countArgs) Kind() string { return "test_count" }

type countWorker struct {
	river.WorkerDefaults[countArgs]
	runs chan int64
}

func (w *countWorker) Work(_ context.Context, j *river.Job[countArgs]) error {
	w.runs <- j.ID
	return nil
}

// Release starts a held job at once, and only a held one: releasing a
// job again after it finished (a late or repeated Release) leaves it
// finished instead of running it a second time.
func TestReleaseOnlyHeldJobs(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool := storetest.Pool(t)
	w := &countWorker{runs: make(chan int64, 4)}
	c := startedClient(t, pool, func(r *work.Registry) { work.Register(r, w) })
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ids, _, err := work.Enqueue(ctx, tx, c, work.Entry{Key: work.Key{Event: "7", RouteVersion: 1, Intent: work.IntentEvent}},
		river.InsertManyParams{Args: countArgs{}, InsertOpts: &river.InsertOpts{Queue: string(work.Interactive)}})
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := work.Release(ctx, pool, ids); err != nil {
		t.Fatal(err)
	}
	if j, _ := c.JobGet(ctx, ids[0]); j.State == rivertype.JobStateScheduled {
		t.Fatal("the released job is still held")
	}
	<-w.runs
	wait.Until(t, "completed", func() bool { j, _ := c.JobGet(ctx, ids[0]); return j.State == rivertype.JobStateCompleted })
	if err := work.Release(ctx, pool, ids); err != nil {
		t.Fatal(err)
	}
	if j, _ := c.JobGet(ctx, ids[0]); j.State != rivertype.JobStateCompleted {
		t.Errorf("a finished job released again is %s, want it left completed", j.State)
	}
}
