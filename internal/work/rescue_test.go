package work_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/riverqueue/river/rivertype"

	"github.com/herald-bot/herald/internal/store/storetest"
	"github.com/herald-bot/herald/internal/testsupport/wait"
	"github.com/herald-bot/herald/internal/work"
	"github.com/herald-bot/herald/internal/work/worktest"
)

// A job left running by a process that died is run again once its lane's
// timeout (and margin) has passed — seconds here, minutes by default —
// not after River's default hour.
func TestStuckJobsAreRescuedAfterTheirLaneTimeout(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t)
	w := worktest.NewCounter(4)
	reg := work.NewRegistry()
	work.Register(reg, w)
	timeouts := work.LaneTimeouts{Interactive: time.Second, Events: time.Second, Sync: time.Second, Background: time.Second}
	c, err := work.NewClient(pool, work.Options{Registry: reg, Lanes: work.LaneWorkers{Interactive: 1, Events: 1, Sync: 1, Background: 1},
		Timeouts: timeouts, ShutdownTimeout: time.Second, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	var id int64
	// What a kill -9 during its first attempt leaves behind.
	if err := pool.QueryRow(t.Context(), `INSERT INTO river_job (args, kind, max_attempts, queue, state, attempt, attempted_at, attempted_by)
		VALUES ('{}', 'test_count', 25, 'interactive', 'running', 1, now() - interval '10 seconds', '{dead-host}') RETURNING id`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer work.Stop(c, time.Second, time.Second)
	if got := <-w.Runs; got != id {
		t.Fatalf("ran job %d, want the stuck %d", got, id)
	}
	wait.Until(t, "completed", func() bool { j, _ := c.JobGet(t.Context(), id); return j.State == rivertype.JobStateCompleted })
}
