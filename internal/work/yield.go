package work

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// Yield lets the fast path go first. While this process receives
// interactions faster than above a second and is short of CPU (cpu.go),
// a job waits before it starts, at most max, so the CPU a burst of
// answers needs is not taken by the work those answers released: a
// member's answer has 3 s, the role change behind it does not. max
// bounds the wait, so under a rush that never ends jobs still run, max
// late. A process with CPU to spare never holds a job: a wait would
// leave Discord's rate limits unused, which no later speed gives back
// (holding role changes whenever clicks came faster than 100 a second
// cost `herald bench rolemenu` 1.36-1.38x the least time at the
// median, against 1.00x). It is River's worker middleware, outermost: a waiting
// job holds its worker (River fetches no more than the lane's workers)
// and has touched nothing yet.
type Yield struct {
	river.MiddlewareDefaults
	above float64
	max   time.Duration
	now   func() time.Time
	sleep func(context.Context, time.Duration) error
	short func(time.Time) bool

	mu       sync.Mutex
	start    time.Time // of the current window
	cur      int       // arrivals in the current window
	prev     int       // arrivals in the one before
	strained bool      // this rush has left the process short of CPU
	waiting  prometheus.Gauge
	waited   prometheus.Counter
	yielded  prometheus.Counter
	fullHold prometheus.Counter
}

// yieldWindow is the span arrivals are counted over: long enough that a
// handful of members clicking together is no rush, short enough that
// jobs start soon after one ends.
const yieldWindow = 250 * time.Millisecond

// yieldStep is how often a waiting job looks again. Every waiting job
// wakes this often, so it is not shorter.
const yieldStep = 25 * time.Millisecond

// YieldOptions configure a Yield.
type YieldOptions struct {
	// Above is the rate of interactions a second above which jobs may
	// wait (0: they never do); Max is the longest one waits.
	Above      float64
	Max        time.Duration
	Registerer prometheus.Registerer
	// Now, Sleep and ShortOfCPU stand in for the clock and the runtime's
	// scheduler in tests (nil: the real ones).
	Now        func() time.Time
	Sleep      func(context.Context, time.Duration) error
	ShortOfCPU func(now time.Time) bool
}

// NewYield makes jobs wait while interactions come fast and the process
// is short of CPU.
func NewYield(o YieldOptions) *Yield {
	y := &Yield{above: o.Above, max: o.Max, now: o.Now, sleep: o.Sleep, short: o.ShortOfCPU,
		waiting: prometheus.NewGauge(prometheus.GaugeOpts{Name: "herald_jobs_yielding", Help: "Jobs waiting before they start while interactions come fast and the process is short of CPU."}),
		waited:  prometheus.NewCounter(prometheus.CounterOpts{Name: "herald_jobs_yield_seconds_total", Help: "Seconds jobs waited before they started, giving way to interactions."}),
		yielded: prometheus.NewCounter(prometheus.CounterOpts{Name: "herald_jobs_yielded_total", Help: "Jobs that waited before they started, giving way to interactions."}),
		fullHold: prometheus.NewCounter(prometheus.CounterOpts{Name: "herald_jobs_yield_max_total",
			Help: "Jobs that waited HERALD_JOBS_YIELD_MAX and then started while interactions still came fast."}),
	}
	if y.now == nil {
		y.now = time.Now
	}
	if y.sleep == nil {
		y.sleep = sleepCtx
	}
	if y.short == nil {
		y.short = newCPUGauge().Short
	}
	if o.Registerer != nil {
		o.Registerer.MustRegister(y.waiting, y.waited, y.yielded, y.fullHold)
	}
	return y
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Arrived counts one interaction received by this process.
func (y *Yield) Arrived() {
	if y == nil || y.above <= 0 {
		return
	}
	y.mu.Lock()
	y.roll(y.now())
	y.cur++
	y.mu.Unlock()
}

// roll moves the window to now; y.mu is held. Two windows without an
// arrival end any rush, whether or not a job looked meanwhile.
func (y *Yield) roll(now time.Time) {
	switch gone := now.Sub(y.start); {
	case gone < yieldWindow:
	case gone < 2*yieldWindow:
		y.prev, y.cur, y.start = y.cur, 0, y.start.Add(yieldWindow)
	default:
		y.prev, y.cur, y.start, y.strained = 0, 0, now, false
	}
}

// Rush reports whether interactions arrive faster than above a second:
// the current window's arrivals plus the part of the previous window's
// that a sliding window would still hold.
func (y *Yield) Rush() bool {
	if y == nil || y.above <= 0 {
		return false
	}
	y.mu.Lock()
	defer y.mu.Unlock()
	return y.rush(y.now())
}

// rush is Rush at now; y.mu is held.
func (y *Yield) rush(now time.Time) bool {
	y.roll(now)
	left := 1 - float64(now.Sub(y.start))/float64(yieldWindow)
	return float64(y.cur)+float64(y.prev)*left > y.above*yieldWindow.Seconds()
}

// Busy reports whether jobs wait: a rush is on, and the process has been
// short of CPU since it began. Once short, a rush stays busy until it
// ends: jobs let go whenever a window shows CPU to spare take it back at
// once, and the answers queue again.
func (y *Yield) Busy() bool {
	if y == nil || y.above <= 0 {
		return false
	}
	y.mu.Lock()
	defer y.mu.Unlock()
	now := y.now()
	y.strained = y.rush(now) && (y.strained || y.short(now))
	return y.strained
}

// Work is River's worker middleware: the job starts once the rush is
// over, or after max.
func (y *Yield) Work(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) error {
	if !y.Busy() {
		return doInner(ctx)
	}
	if err := y.wait(ctx); err != nil {
		return err
	}
	return doInner(ctx)
}

// wait holds a job while the process is busy, at most max.
func (y *Yield) wait(ctx context.Context) error {
	y.waiting.Inc()
	y.yielded.Inc()
	start := y.now()
	defer func() {
		y.waiting.Dec()
		y.waited.Add(y.now().Sub(start).Seconds())
	}()
	for y.Busy() {
		left := y.max - y.now().Sub(start)
		if left <= 0 {
			y.fullHold.Inc()
			return nil
		}
		if err := y.sleep(ctx, min(left, yieldStep)); err != nil {
			return err
		}
	}
	return nil
}
