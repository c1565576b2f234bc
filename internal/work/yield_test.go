package work_test

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/herald-bot/herald/internal/store/storetest"
	"github.com/herald-bot/herald/internal/testsupport/metricvalue"
	"github.com/herald-bot/herald/internal/testsupport/wait"
	"github.com/herald-bot/herald/internal/work"
)

// fakeTime is a clock that moves only when told: each sleep of a waiting
// job moves it by the sleep, and runs tick, so a test says what arrives
// meanwhile.
type fakeTime struct {
	mu   sync.Mutex
	t    time.Time
	tick func()
}

func newFakeTime() *fakeTime { return &fakeTime{t: time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)} }

func (f *fakeTime) now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.t
}

func (f *fakeTime) advance(d time.Duration) {
	f.mu.Lock()
	f.t = f.t.Add(d)
	f.mu.Unlock()
}

func (f *fakeTime) sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f.advance(d)
	if f.tick != nil {
		f.tick()
	}
	return nil
}

// started runs y's middleware on a job and returns how long, on the fake
// clock, the job waited before it started, and the middleware's error.
func started(ctx context.Context, y *work.Yield, ft *fakeTime) (time.Duration, bool, error) {
	begin := ft.now()
	ran := false
	var at time.Time
	err := y.Work(ctx, &rivertype.JobRow{Kind: "test"}, func(context.Context) error {
		ran, at = true, ft.now()
		return nil
	})
	return at.Sub(begin), ran, err
}

// cpu is a stand-in for the runtime's scheduler: short or not.
type cpu struct {
	mu    sync.Mutex
	short bool
}

func (c *cpu) set(short bool) {
	c.mu.Lock()
	c.short = short
	c.mu.Unlock()
}

func (c *cpu) Short(time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.short
}

func newYield(ft *fakeTime, c *cpu, above float64, reg prometheus.Registerer) *work.Yield {
	return work.NewYield(work.YieldOptions{Above: above, Max: 2 * time.Second, Registerer: reg, Now: ft.now, Sleep: ft.sleep, ShortOfCPU: c.Short})
}

func arrive(y *work.Yield, n int) {
	for range n {
		y.Arrived()
	}
}

// Below the rate a job starts at once, short of CPU or not; at no rate
// at all (0) it never waits, whatever arrives.
func TestYieldLetsJobsStartAtOnceWhenQuiet(t *testing.T) {
	ft, c := newFakeTime(), &cpu{short: true}
	y := newYield(ft, c, 100, nil)
	arrive(y, 20) // 80 a second over the 250 ms window
	if took, ran, err := started(t.Context(), y, ft); err != nil || !ran || took != 0 {
		t.Fatalf("at 80 interactions a second, a job with a limit of 100 waited %s (ran %v, err %v); want it started at once", took, ran, err)
	}
	off := newYield(ft, c, 0, nil)
	arrive(off, 10000)
	if off.Rush() || off.Busy() {
		t.Fatal("a Yield with no rate says it is in a rush")
	}
	if took, ran, err := started(t.Context(), off, ft); err != nil || !ran || took != 0 {
		t.Fatalf("with yielding off a job waited %s (ran %v, err %v)", took, ran, err)
	}
}

// A rush on a process with CPU to spare holds no job: a wait would leave
// Discord's rate limits unused.
func TestYieldLetsJobsStartInARushWithCPUToSpare(t *testing.T) {
	ft, c := newFakeTime(), &cpu{}
	y := newYield(ft, c, 100, nil)
	arrive(y, 100)
	if !y.Rush() {
		t.Fatal("100 interactions in one instant with a limit of 100 a second: no rush")
	}
	if took, ran, err := started(t.Context(), y, ft); err != nil || !ran || took != 0 {
		t.Fatalf("in a rush with CPU to spare a job waited %s (ran %v, err %v); want it started at once", took, ran, err)
	}
}

// A burst that leaves the process short of CPU holds a job until the
// burst has slid out of the window, far sooner than the longest wait.
func TestYieldStartsJobsOnceTheRushEnds(t *testing.T) {
	ft, c := newFakeTime(), &cpu{short: true}
	reg := prometheus.NewRegistry()
	y := newYield(ft, c, 100, reg)
	arrive(y, 100) // 100 in one instant: 400 a second over 250 ms
	took, ran, err := started(t.Context(), y, ft)
	if err != nil || !ran {
		t.Fatalf("job did not start (err %v)", err)
	}
	// The sliding estimate, 100 × (1 − x/250 ms) for the previous window,
	// falls to the limit's 25 at x = 187.5 ms into the next window.
	if took < 400*time.Millisecond || took > 475*time.Millisecond {
		t.Fatalf("job waited %s after a burst of 100; want 437.5 ms rounded up to the next 25 ms step", took)
	}
	if n := metricvalue.Of(t, reg, "herald_jobs_yielded_total", nil); n != 1 {
		t.Fatalf("herald_jobs_yielded_total = %v, want 1", n)
	}
	if s := metricvalue.Of(t, reg, "herald_jobs_yield_seconds_total", nil); s < 0.4 || s > 0.475 {
		t.Fatalf("herald_jobs_yield_seconds_total = %v, want the job's wait", s)
	}
	if n := metricvalue.Of(t, reg, "herald_jobs_yield_max_total", nil); n != 0 {
		t.Fatalf("herald_jobs_yield_max_total = %v after a wait shorter than the max", n)
	}
}

// Under a rush that does not end, a job waits the longest wait and then
// starts: it is late, never starved. The rush stays busy though the
// process shows CPU to spare once its jobs wait.
func TestYieldStartsJobsAfterTheLongestWait(t *testing.T) {
	ft, c := newFakeTime(), &cpu{short: true}
	reg := prometheus.NewRegistry()
	y := newYield(ft, c, 100, reg)
	ft.tick = func() {
		arrive(y, 10) // 10 every 25 ms step: 400 a second
		c.set(false)
	}
	arrive(y, 100)
	took, ran, err := started(t.Context(), y, ft)
	if err != nil || !ran || took != 2*time.Second {
		t.Fatalf("under 400 interactions a second the job waited %s (ran %v, err %v); want exactly the 2 s max", took, ran, err)
	}
	if n := metricvalue.Of(t, reg, "herald_jobs_yield_max_total", nil); n != 1 {
		t.Fatalf("herald_jobs_yield_max_total = %v, want 1", n)
	}
	if n := metricvalue.Of(t, reg, "herald_jobs_yielding", nil); n != 0 {
		t.Fatalf("herald_jobs_yielding = %v once the job started, want 0", n)
	}
	// The rush ended; the next one must be short of CPU again to hold jobs.
	ft.tick = nil
	ft.advance(time.Second)
	arrive(y, 100)
	if y.Busy() {
		t.Fatal("a new rush with CPU to spare holds jobs because an earlier one was short")
	}
}

// A job whose context ends while it waits returns the context's error
// without running, so River retries it.
func TestYieldReturnsWhenTheJobIsCancelled(t *testing.T) {
	ft, c := newFakeTime(), &cpu{short: true}
	y := newYield(ft, c, 100, nil)
	ctx, cancel := context.WithCancel(t.Context())
	ft.tick = func() { arrive(y, 10); cancel() }
	arrive(y, 100)
	if _, ran, err := started(ctx, y, ft); ran || !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled while waiting: ran %v, err %v; want not run, context.Canceled", ran, err)
	}
}

type yieldArgs struct{}

func (yieldArgs) Kind() string { return "test_yield" }

type yieldWorker struct {
	river.WorkerDefaults[yieldArgs]
	ran chan struct{}
}

func (w yieldWorker) Work(context.Context, *river.Job[yieldArgs]) error {
	close(w.ran)
	return nil
}

// Through herald's River client: a job fetched while interactions come
// fast waits, holding its worker but not running, and runs once they
// stop.
func TestYieldHoldsJobsOfTheClient(t *testing.T) {
	t.Parallel()
	ft := newFakeTime()
	reg := prometheus.NewRegistry()
	y := work.NewYield(work.YieldOptions{Above: 100, Max: time.Hour, Registerer: reg, Now: ft.now, ShortOfCPU: (&cpu{short: true}).Short})
	w := yieldWorker{ran: make(chan struct{})}
	jobs := work.NewRegistry()
	work.Register(jobs, w)
	c, err := work.NewClient(storetest.Pool(t), work.Options{Lanes: work.LaneWorkers{Interactive: 1, Events: 1, Sync: 1, Background: 1},
		Registry: jobs, ShutdownTimeout: time.Second, Logger: slog.New(slog.DiscardHandler), Yield: y})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { work.Stop(c, time.Second, time.Second) })
	arrive(y, 100)
	if _, err := c.Insert(t.Context(), yieldArgs{}, &river.InsertOpts{Queue: string(work.Interactive)}); err != nil {
		t.Fatal(err)
	}
	wait.Until(t, "the job to wait for the fast path", func() bool { return metricvalue.Of(t, reg, "herald_jobs_yielding", nil) == 1 })
	select {
	case <-w.ran:
		t.Fatal("the job ran while interactions came at 400 a second")
	default:
	}
	ft.advance(time.Second)
	recv(t, w.ran)
}
