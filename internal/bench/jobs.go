package bench

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/riverqueue/river"

	"github.com/herald-bot/herald/internal/work"
)

// JobsSide is one side's figures: herald's job layer or bare River.
type JobsSide struct {
	// Enqueue phase: Callers enqueue Jobs no-op jobs as fast as they can,
	// nothing working them. Latency is one enqueue's call, until the job
	// is durable; the rate counts durable enqueues per second.
	EnqueueP50MS float64 `json:"enqueue_p50_ms"`
	EnqueueP99MS float64 `json:"enqueue_p99_ms"`
	EnqueuedPerS float64 `json:"enqueued_per_s"`
	// InRiverPerS counts the same jobs until the last is a River job:
	// for herald, once its dispatcher moved it out of the outbox; for
	// bare River, the same as EnqueuedPerS.
	InRiverPerS float64 `json:"in_river_per_s"`
	// Worked phase: Rate enqueues a second for Seconds, workers running.
	// Latency is from the enqueue call to the worker's Work being called.
	WorkedP50MS float64 `json:"worked_p50_ms"`
	WorkedP99MS float64 `json:"worked_p99_ms"`
	Worked      int     `json:"worked"`
	SentPerS    float64 `json:"sent_per_s"`
	// Conns is the most connections the side may hold.
	Conns int `json:"conns"`
}

// JobsResult is what `herald bench jobs --json` prints: herald's job
// overhead over bare River on the same Postgres, database and tables.
type JobsResult struct {
	Jobs    int      `json:"jobs"`
	Callers int      `json:"callers"`
	Rate    int      `json:"rate"`
	Seconds float64  `json:"seconds"`
	Workers int      `json:"workers"`
	Herald  JobsSide `json:"herald"`
	Bare    JobsSide `json:"bare"`
	// Herald over bare River: above 1 herald takes longer (latency) or
	// does more (rates).
	EnqueueP50Ratio   float64 `json:"enqueue_p50_ratio"`
	EnqueueP99Ratio   float64 `json:"enqueue_p99_ratio"`
	EnqueuedPerSRatio float64 `json:"enqueued_per_s_ratio"`
	InRiverPerSRatio  float64 `json:"in_river_per_s_ratio"`
	WorkedP50Ratio    float64 `json:"worked_p50_ratio"`
	WorkedP99Ratio    float64 `json:"worked_p99_ratio"`
}

// JobsOptions shapes a jobs run.
type JobsOptions struct {
	Jobs     int           // enqueued in the enqueue phase
	Callers  int           // enqueueing at once in the enqueue phase
	Rate     int           // enqueues a second in the worked phase
	Duration time.Duration // of the worked phase
	Workers  int           // working the lane, on each side
}

// RunJobs measures, on dbURL (a migrated database it may empty), the same
// no-op job through herald's job layer and through bare River, one side
// after the other, each from empty tables:
//
//   - herald: the fast path's enqueue (an idempotency key and the
//     interaction's token in the ledger, the job in the outbox, written by
//     the group writer, then released to the dispatcher, which inserts it
//     into River), pools shaped as app.New shapes them, and a worker
//     registered through work.Register on work.NewClient, so it runs
//     inside herald's lane, outcome and ordering middleware, with the
//     client also polling herald's other lanes and its housekeeping job;
//   - bare: river.Client.Insert of the same args into the same queue on
//     one pool with as many connections as herald's two, and the same
//     worker added with river.AddWorker.
//
// River's own settings (fetch cooldown and poll interval) are its
// defaults on both sides. The fast path releases a job once its
// interaction is answered; here it is released once it is durable.
func RunJobs(ctx context.Context, dbURL string, o JobsOptions) (JobsResult, error) {
	res := JobsResult{Jobs: o.Jobs, Callers: o.Callers, Rate: o.Rate, Seconds: o.Duration.Seconds(), Workers: o.Workers}
	for _, s := range []struct {
		name  string
		out   *JobsSide
		build func(context.Context, string, int, *recorder) (jobsRig, error)
	}{{"herald", &res.Herald, newHeraldRig}, {"bare River", &res.Bare, newBareRig}} {
		var err error
		if *s.out, err = runJobsSide(ctx, dbURL, o, s.build); err != nil {
			return res, fmt.Errorf("%s: %w", s.name, err)
		}
	}
	h, b := res.Herald, res.Bare
	res.EnqueueP50Ratio, res.EnqueueP99Ratio = h.EnqueueP50MS/b.EnqueueP50MS, h.EnqueueP99MS/b.EnqueueP99MS
	res.EnqueuedPerSRatio, res.InRiverPerSRatio = h.EnqueuedPerS/b.EnqueuedPerS, h.InRiverPerS/b.InRiverPerS
	res.WorkedP50Ratio, res.WorkedP99Ratio = h.WorkedP50MS/b.WorkedP50MS, h.WorkedP99MS/b.WorkedP99MS
	return res, nil
}

// noopArgs is the job both sides enqueue and work.
type noopArgs struct {
	Seq int `json:"seq"`
}

func (noopArgs) Kind() string { return "bench_noop" }

type noopWorker struct {
	river.WorkerDefaults[noopArgs]
	rec *recorder
}

func (w *noopWorker) Work(_ context.Context, j *river.Job[noopArgs]) error {
	w.rec.worked(j.Args.Seq)
	return nil
}

// recorder keeps when each job was first worked.
type recorder struct {
	mu sync.Mutex
	at map[int]time.Time
}

func (r *recorder) worked(seq int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.at[seq]; !ok {
		r.at[seq] = time.Now()
	}
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.at)
}

func (r *recorder) snapshot() map[int]time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.at)
}

// jobsRig is one side: enqueue returns once job seq is durable; inRiver
// waits until n jobs are River jobs; start begins working; close stops
// everything and closes the pools.
type jobsRig interface {
	enqueue(ctx context.Context, seq int) error
	inRiver(ctx context.Context, n int) error
	start(ctx context.Context) error
	close()
	conns() int
}

// benchQueue is the lane both sides' jobs go to.
const benchQueue = string(work.Interactive)

// runJobsSide runs both phases on one side: enqueue with nothing
// working, then, from empty tables again, enqueue and work.
func runJobsSide(ctx context.Context, dbURL string, o JobsOptions, build func(context.Context, string, int, *recorder) (jobsRig, error)) (JobsSide, error) {
	if err := emptyTables(ctx, dbURL); err != nil {
		return JobsSide{}, err
	}
	rec := &recorder{at: map[int]time.Time{}}
	rig, err := build(ctx, dbURL, o.Workers, rec)
	if err != nil {
		return JobsSide{}, err
	}
	defer rig.close()
	side := JobsSide{Conns: rig.conns()}
	// A warm-up opens the pools' connections and plans the statements.
	warm := 4 * o.Callers
	if _, _, err := enqueueAll(ctx, rig, 0, warm, o.Callers); err != nil {
		return side, err
	}
	if err := rig.inRiver(ctx, warm); err != nil {
		return side, err
	}
	start := time.Now()
	lat, durable, err := enqueueAll(ctx, rig, warm, o.Jobs, o.Callers)
	if err != nil {
		return side, err
	}
	if err := rig.inRiver(ctx, warm+o.Jobs); err != nil {
		return side, err
	}
	inRiver := time.Since(start)
	side.EnqueueP50MS, side.EnqueueP99MS = rank(lat, 50, len(lat), 0), rank(lat, 99, len(lat), 0)
	side.EnqueuedPerS, side.InRiverPerS = float64(o.Jobs)/durable.Seconds(), float64(o.Jobs)/inRiver.Seconds()

	if err := emptyTables(ctx, dbURL); err != nil {
		return side, err
	}
	if err := rig.start(ctx); err != nil {
		return side, err
	}
	return side, side.work(ctx, rig, rec, o)
}

// enqueueAll enqueues n jobs numbered from first with callers at once and
// returns each call's milliseconds, sorted, and how long all took.
func enqueueAll(ctx context.Context, rig jobsRig, first, n, callers int) ([]float64, time.Duration, error) {
	lat := make([]float64, n)
	next := make(chan int, n)
	for i := range n {
		next <- i
	}
	close(next)
	errs := make(chan error, callers)
	start := time.Now()
	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			for i := range next {
				t := time.Now()
				if err := rig.enqueue(ctx, first+i); err != nil {
					errs <- err
					return
				}
				lat[i] = ms(time.Since(t))
			}
		})
	}
	wg.Wait()
	took := time.Since(start)
	close(errs)
	if err := <-errs; err != nil {
		return nil, 0, err
	}
	slices.Sort(lat)
	return lat, took, nil
}

// work enqueues Rate jobs a second for Duration, each from its own
// goroutine, and waits until each is worked.
func (side *JobsSide) work(ctx context.Context, rig jobsRig, rec *recorder, o JobsOptions) error {
	n := int(float64(o.Rate) * o.Duration.Seconds())
	sent := make([]time.Time, n)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range n {
		// Paced by the schedule, so a slow send catches up.
		time.Sleep(time.Until(start.Add(time.Duration(i) * time.Second / time.Duration(o.Rate))))
		sent[i] = time.Now()
		wg.Go(func() {
			if err := rig.enqueue(ctx, i); err != nil {
				errs <- err
			}
		})
	}
	side.SentPerS = float64(n) / time.Since(start).Seconds()
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	err := until(30*time.Second, "every job worked", func() bool { return rec.count() >= n })
	at := rec.snapshot()
	var got []float64
	for i, s := range sent {
		if w, ok := at[i]; ok {
			got = append(got, ms(w.Sub(s)))
		}
	}
	slices.Sort(got)
	side.Worked = len(got)
	side.WorkedP50MS, side.WorkedP99MS = rank(got, 50, n, math.Inf(1)), rank(got, 99, n, math.Inf(1))
	if err != nil {
		return fmt.Errorf("%w: %d of %d worked", err, len(got), n)
	}
	return nil
}
