package worktest_test

import (
	"testing"
	"time"

	"github.com/riverqueue/river"

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
