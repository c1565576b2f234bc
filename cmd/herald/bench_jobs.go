package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/herald-bot/herald/internal/bench"
)

func jobsSuite() suite {
	return newSuite("jobs", "herald's job layer against bare River on the same Postgres: enqueue latency and rate, enqueue-to-worked latency",
		"Enqueues the same no-op job through herald's job layer (ledger key and token, outbox, group writer, dispatcher into River; its worker inside herald's lane, outcome and ordering middleware; pools as herald shapes them) and through bare River (Client.Insert; the same worker; one pool with as many connections), one side after the other on the same database, each from empty tables. Phase one: --callers enqueue --jobs as fast as they can, nothing working them. Phase two: --rate jobs a second for --duration, --workers working each side. River fetches at most 10 times a second per queue, each fetch up to the idle workers, so a rate above 10 × --workers queues up on both sides. Uses a database named after DATABASE_URL's with a _bench suffix.",
		func(fs *flag.FlagSet) func(context.Context, env) (bench.JobsResult, error) {
			jobs := fs.Int("jobs", 5000, "jobs enqueued in phase one")
			callers := fs.Int("callers", 64, "callers enqueueing at once in phase one")
			rate := fs.Int("rate", 100, "jobs enqueued per second in phase two")
			duration := fs.Duration("duration", 5*time.Second, "how long phase two enqueues")
			workers := fs.Int("workers", 20, "workers of the lane on each side in phase two (herald's HERALD_WORKERS_INTERACTIVE default)")
			return func(ctx context.Context, e env) (bench.JobsResult, error) {
				if err := cmp.Or(within("jobs", *jobs, 1, 1_000_000), within("callers", *callers, 1, 1024), within("rate", *rate, 1, 10_000),
					within("duration", *duration, time.Second, 10*time.Minute), within("workers", *workers, 1, 1000)); err != nil {
					return bench.JobsResult{}, err
				}
				dbURL, err := benchDatabase(ctx, e)
				if err != nil {
					return bench.JobsResult{}, err
				}
				return bench.RunJobs(ctx, dbURL, bench.JobsOptions{Jobs: *jobs, Callers: *callers, Rate: *rate, Duration: *duration, Workers: *workers})
			}
		}, printJobs)
}

func printJobs(w io.Writer, r bench.JobsResult) {
	fmt.Fprintf(w, "herald's job layer and bare River, one after the other on one database, %d connections each\n", r.Herald.Conns)
	fmt.Fprintf(w, "  %d no-op jobs enqueued by %d callers, nothing working\n", r.Jobs, r.Callers)
	fmt.Fprintf(w, "    %-14s %10s %10s %12s %12s\n", "", "p50 ms", "p99 ms", "durable/s", "in River/s")
	for _, s := range []struct {
		name string
		s    bench.JobsSide
	}{{"herald", r.Herald}, {"bare River", r.Bare}} {
		fmt.Fprintf(w, "    %-14s %10.2f %10.2f %12.0f %12.0f\n", s.name, s.s.EnqueueP50MS, s.s.EnqueueP99MS, s.s.EnqueuedPerS, s.s.InRiverPerS)
	}
	fmt.Fprintf(w, "    %-14s %9.3f× %9.3f× %11.3f× %11.3f×\n", "herald ÷ bare", r.EnqueueP50Ratio, r.EnqueueP99Ratio, r.EnqueuedPerSRatio, r.InRiverPerSRatio)
	fmt.Fprintf(w, "  %d jobs a second for %gs, %d workers: enqueue to worked\n", r.Rate, r.Seconds, r.Workers)
	fmt.Fprintf(w, "    %-14s %10s %10s %12s\n", "", "p50 ms", "p99 ms", "worked")
	for _, s := range []struct {
		name string
		s    bench.JobsSide
	}{{"herald", r.Herald}, {"bare River", r.Bare}} {
		fmt.Fprintf(w, "    %-14s %10.2f %10.2f %12d\n", s.name, s.s.WorkedP50MS, s.s.WorkedP99MS, s.s.Worked)
	}
	fmt.Fprintf(w, "    %-14s %9.3f× %9.3f×\n", "herald ÷ bare", r.WorkedP50Ratio, r.WorkedP99Ratio)
}
