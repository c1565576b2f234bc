package work_test

import (
	"context"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/herald-bot/herald/internal/store/storetest"
	"github.com/herald-bot/herald/internal/testsupport/wait"
	"github.com/herald-bot/herald/internal/work"
	"github.com/herald-bot/herald/internal/work/worktest"
)

type boardArgs struct {
	work.View
	Name string
}

func (boardArgs) Kind() string { return "test_board" }

type boardWorker struct {
	river.WorkerDefaults[boardArgs]
	rendered chan string
}

func (w *boardWorker) Work(_ context.Context, j *river.Job[boardArgs]) error {
	w.rendered <- j.Args.Name
	return nil
}

// A view past its deadline is cancelled as expired without rendering; one
// within it renders.
func TestViewsExpire(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t)
	w := &boardWorker{rendered: make(chan string, 4)}
	c := worktest.Client(t, pool, func(r *work.Registry) { work.Register(r, w) })
	ctx := t.Context()
	stale, _ := c.Insert(ctx, boardArgs{View: work.View{DeadlineAt: time.Now().Add(-time.Second)}, Name: "stale"}, &river.InsertOpts{Queue: string(work.Background)})
	fresh, _ := c.Insert(ctx, boardArgs{View: work.View{DeadlineAt: time.Now().Add(time.Minute)}, Name: "fresh"}, &river.InsertOpts{Queue: string(work.Background)})
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer work.Stop(c, time.Second, time.Second)
	if got := <-w.rendered; got != "fresh" {
		t.Fatalf("rendered %q", got)
	}
	wait.Until(t, "stale expired", func() bool {
		s, _ := work.JobState(ctx, c, stale.Job.ID)
		return s.Name == "expired" && s.Reason == work.ReasonExpired
	})
	wait.Until(t, "fresh done", func() bool {
		s, _ := work.JobState(ctx, c, fresh.Job.ID)
		return s.Name == "done"
	})
	select {
	case got := <-w.rendered:
		t.Errorf("rendered %q past its deadline", got)
	default:
	}
}

// Background work progresses while the interactive lane is flooded: lanes
// are queues with workers of their own.
func TestBackgroundProgressesUnderInteractiveLoad(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t)
	w := &boardWorker{rendered: make(chan string, 1000)}
	c := worktest.Client(t, pool, func(r *work.Registry) { work.Register(r, w) })
	ctx := t.Context()
	var flood []river.InsertManyParams
	for range 500 {
		flood = append(flood, river.InsertManyParams{Args: boardArgs{Name: "interactive"}, InsertOpts: &river.InsertOpts{Queue: string(work.Interactive)}})
	}
	if _, err := c.InsertMany(ctx, flood); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Insert(ctx, boardArgs{Name: "background"}, &river.InsertOpts{Queue: string(work.Background)}); err != nil {
		t.Fatal(err)
	}
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer work.Stop(c, time.Second, time.Second)
	// The interactive lane works two jobs at a time; the background lane's
	// own worker takes its job in its first fetch, long before the flood
	// is half worked. A background job waiting for the flood would fail
	// the bound, or the deadline if it never ran.
	before := 0
	deadline := time.After(30 * time.Second)
wait:
	for {
		select {
		case got := <-w.rendered:
			if got == "background" {
				break wait
			}
			before++
		case <-deadline:
			t.Fatalf("the background job had not run after %d interactive jobs and 30 s", before)
		}
	}
	if before >= 250 {
		t.Errorf("background ran after %d of 500 interactive jobs, want before half of them", before)
	}
	t.Logf("background job ran after %d of 500 interactive jobs", before)
}
