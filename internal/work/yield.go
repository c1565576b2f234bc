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
// interactions faster than above a second, a job waits before it starts,
// at most max, so the CPU and connections a burst of answers needs are
// not taken by the work those answers released: a member's answer has
// 3 s, the role change behind it does not. max bounds the wait, so under
// a rush that never ends jobs still run, max late. It is River's worker
// middleware, outermost: a waiting job holds its worker (River fetches
// no more than the lane's workers) and has touched nothing yet.
type Yield struct {
	river.MiddlewareDefaults
	above float64
	max   time.Duration
	now   func() time.Time
	sleep func(context.Context, time.Duration) error

	mu       sync.Mutex
	start    time.Time // of the current window
	cur      int       // arrivals in the current window
	prev     int       // arrivals in the one before
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

// NewYield makes jobs wait while interactions arrive faster than above a
// second, each at most max; above 0 never waits. now and sleep are the
// clock (nil: the real one).
func NewYield(above float64, max time.Duration, reg prometheus.Registerer, now func() time.Time, sleep func(context.Context, time.Duration) error) *Yield {
	if now == nil {
		now = time.Now
	}
	if sleep == nil {
		sleep = sleepCtx
	}
	y := &Yield{above: above, max: max, now: now, sleep: sleep,
		waiting: prometheus.NewGauge(prometheus.GaugeOpts{Name: "herald_jobs_yielding", Help: "Jobs waiting before they start while interactions arrive faster than HERALD_JOBS_YIELD_ABOVE."}),
		waited:  prometheus.NewCounter(prometheus.CounterOpts{Name: "herald_jobs_yield_seconds_total", Help: "Seconds jobs waited before they started, giving way to interactions."}),
		yielded: prometheus.NewCounter(prometheus.CounterOpts{Name: "herald_jobs_yielded_total", Help: "Jobs that waited before they started, giving way to interactions."}),
		fullHold: prometheus.NewCounter(prometheus.CounterOpts{Name: "herald_jobs_yield_max_total",
			Help: "Jobs that waited HERALD_JOBS_YIELD_MAX and then started while interactions still arrived faster than HERALD_JOBS_YIELD_ABOVE."}),
	}
	if reg != nil {
		reg.MustRegister(y.waiting, y.waited, y.yielded, y.fullHold)
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

// roll moves the window to now; y.mu is held.
func (y *Yield) roll(now time.Time) {
	switch gone := now.Sub(y.start); {
	case gone < yieldWindow:
	case gone < 2*yieldWindow:
		y.prev, y.cur, y.start = y.cur, 0, y.start.Add(yieldWindow)
	default:
		y.prev, y.cur, y.start = 0, 0, now
	}
}

// Busy reports whether interactions arrive faster than above a second:
// the current window's arrivals plus the part of the previous window's
// that a sliding window would still hold.
func (y *Yield) Busy() bool {
	if y == nil || y.above <= 0 {
		return false
	}
	y.mu.Lock()
	defer y.mu.Unlock()
	now := y.now()
	y.roll(now)
	left := 1 - float64(now.Sub(y.start))/float64(yieldWindow)
	return float64(y.cur)+float64(y.prev)*left > y.above*yieldWindow.Seconds()
}

// Work is River's worker middleware: the job starts once interactions
// slow down below above a second, or after max.
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
