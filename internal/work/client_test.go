package work_test

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/herald-bot/herald/internal/store/storetest"
	"github.com/herald-bot/herald/internal/testsupport/pgtest"
	"github.com/herald-bot/herald/internal/work"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// blockArgs is a test job that runs until released or cancelled.
type blockArgs struct{ Lane string }

func (blockArgs) Kind() string { return "test_block" }

type blockWorker struct {
	river.WorkerDefaults[blockArgs]
	started chan string
	release chan struct{}
	ended   chan error
}

func (w *blockWorker) Work(ctx context.Context, j *river.Job[blockArgs]) error {
	w.started <- j.Args.Lane
	select {
	case <-w.release:
		w.ended <- nil
		return nil
	case <-ctx.Done():
		w.ended <- ctx.Err()
		return ctx.Err()
	}
}

func newClient(t *testing.T, shutdown time.Duration) (*work.Client, *blockWorker) {
	t.Helper()
	w := &blockWorker{started: make(chan string, 10), release: make(chan struct{}), ended: make(chan error, 10)}
	reg := work.NewRegistry()
	work.Register(reg, w)
	c, err := work.NewClient(storetest.Pool(t), work.Options{
		Lanes:           work.LaneWorkers{Interactive: 2, Events: 1, Sync: 1, Background: 1},
		Registry:        reg,
		ShutdownTimeout: shutdown,
		Logger:          slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	return c, w
}

func recv[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatal("timed out waiting")
	}
	panic("unreachable")
}

// Every lane is a River queue that works jobs, and a lane never runs more
// jobs at once than its worker count.
func TestLanesWorkJobsUpToTheirWorkerCount(t *testing.T) {
	t.Parallel()
	c, w := newClient(t, 10*time.Second)
	ctx := t.Context()
	for _, lane := range work.Lanes() {
		if _, err := c.Insert(ctx, blockArgs{Lane: string(lane)}, &river.InsertOpts{Queue: string(lane)}); err != nil {
			t.Fatal(err)
		}
	}
	// A second background job must wait: the lane has one worker.
	if _, err := c.Insert(ctx, blockArgs{Lane: "background-2"}, &river.InsertOpts{Queue: string(work.Background)}); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for range work.Lanes() {
		seen[recv(t, w.started)] = true
	}
	for _, lane := range work.Lanes() {
		if !seen[string(lane)] {
			t.Errorf("lane %s did not run its job", lane)
		}
	}
	select {
	case l := <-w.started:
		t.Fatalf("job %s started while its lane's only worker was busy", l)
	case <-time.After(300 * time.Millisecond):
	}
	close(w.release)
	if got := recv(t, w.started); got != "background-2" {
		t.Errorf("queued job = %s", got)
	}
	if err := work.Stop(c, 5*time.Second, time.Second); err != nil {
		t.Fatal(err)
	}
}

// Stop lets a running job finish when it does so within the shutdown timeout.
func TestStopWaitsForRunningJobs(t *testing.T) {
	t.Parallel()
	c, w := newClient(t, 10*time.Second)
	if _, err := c.Insert(t.Context(), blockArgs{Lane: "events"}, &river.InsertOpts{Queue: string(work.Events)}); err != nil {
		t.Fatal(err)
	}
	recv(t, w.started)
	stopped := make(chan error, 1)
	go func() { stopped <- work.Stop(c, 10*time.Second, time.Second) }()
	select {
	case err := <-stopped:
		t.Fatalf("Stop returned (%v) while a job was still running", err)
	case <-time.After(200 * time.Millisecond):
	}
	close(w.release)
	if err := recv(t, w.ended); err != nil {
		t.Fatalf("job ended with %v, want it to finish", err)
	}
	if err := recv(t, stopped); err != nil {
		t.Fatal(err)
	}
}

// A job still running at the shutdown timeout has its context cancelled and
// stays in the database to run again after restart.
func TestStopCancelsJobsPastTheTimeout(t *testing.T) {
	t.Parallel()
	c, w := newClient(t, 300*time.Millisecond)
	res, err := c.Insert(t.Context(), blockArgs{Lane: "sync"}, &river.InsertOpts{Queue: string(work.Sync)})
	if err != nil {
		t.Fatal(err)
	}
	recv(t, w.started)
	if err := work.Stop(c, 300*time.Millisecond, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := recv(t, w.ended); !errors.Is(err, context.Canceled) {
		t.Fatalf("job ended with %v, want context.Canceled", err)
	}
	job, err := c.JobGet(context.Background(), res.Job.ID)
	if err != nil {
		t.Fatal(err)
	}
	if job.State != rivertype.JobStateRetryable && job.State != rivertype.JobStateAvailable {
		t.Errorf("cancelled-by-shutdown job state = %s, want it kept for a retry", job.State)
	}
}

// Without job kinds the client still inserts (jobs wait for a process that
// works them) but refuses to start working.
func TestClientWithoutKindsOnlyInserts(t *testing.T) {
	t.Parallel()
	reg := work.NewRegistry()
	if len(reg.Kinds()) != 0 {
		t.Fatal("new registry not empty")
	}
	c, err := work.NewClient(storetest.Pool(t), work.Options{Registry: reg, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.Insert(t.Context(), blockArgs{Lane: "events"}, &river.InsertOpts{Queue: string(work.Events)})
	if err != nil || res.Job.State != rivertype.JobStateAvailable {
		t.Fatalf("insert = %v, %v", res, err)
	}
	if err := c.Start(t.Context()); err == nil {
		t.Fatal("an insert-only client must not start")
	}
}

func TestRegistryKinds(t *testing.T) {
	t.Parallel()
	reg := work.NewRegistry()
	work.Register(reg, &blockWorker{})
	if got := reg.Kinds(); len(got) != 1 || got[0] != "test_block" {
		t.Errorf("kinds = %v", got)
	}
	// A kind is labelled by the section it was registered through; every
	// view shares the kinds.
	if got := reg.LabelKey("test_block"); got != "herald.jobs.test_block" {
		t.Errorf("label key = %q", got)
	}
	tickets := reg.Section("tickets")
	work.Register(tickets, &boardWorker{})
	if got := reg.LabelKey("test_board"); got != "tickets.jobs.test_board" {
		t.Errorf("label key through a section = %q", got)
	}
	if got := reg.Kinds(); len(got) != 2 {
		t.Errorf("kinds after a section registered = %v", got)
	}
	if got := tickets.LabelKey("nope"); got != "" {
		t.Errorf("label key of an unknown kind = %q", got)
	}
}

func TestQueuesMatchLanes(t *testing.T) {
	t.Parallel()
	q := work.Queues(work.LaneWorkers{Interactive: 4, Events: 3, Sync: 2, Background: 1})
	want := map[work.Lane]int{work.Interactive: 4, work.Events: 3, work.Sync: 2, work.Background: 1}
	if len(q) != len(want) {
		t.Fatalf("queues = %v", q)
	}
	for lane, n := range want {
		if q[string(lane)].MaxWorkers != n {
			t.Errorf("lane %s workers = %d, want %d", lane, q[string(lane)].MaxWorkers, n)
		}
	}
}

// River's reindexer rebuilds exactly the indexes the migrations left on
// its job table: none it would warn about as missing, none left out. The
// metadata index writes directly, without a pending list to merge.
func TestReindexerNamesTheMigratedIndexes(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t)
	rows, err := pool.Query(t.Context(), `SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() AND tablename = 'river_job' ORDER BY indexname`)
	if err != nil {
		t.Fatal(err)
	}
	have, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	want := slices.Sorted(slices.Values(work.Config(pool, work.Options{}).ReindexerIndexNames))
	if !slices.Equal(have, want) {
		t.Errorf("river_job's indexes %v, reindexed %v", have, want)
	}
	if slices.Contains(have, "river_job_args_index") {
		t.Error("river_job still has the GIN index on args")
	}
	var opts []string
	if err := pool.QueryRow(t.Context(), `SELECT coalesce(reloptions, '{}') FROM pg_class WHERE oid = 'river_job_metadata_index'::regclass`).Scan(&opts); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(opts, "fastupdate=off") {
		t.Errorf("river_job_metadata_index options %v, want fastupdate=off", opts)
	}
}
