package work

import (
	rtmetrics "runtime/metrics"
	"sync"
	"time"
)

// schedLatencies is the Go runtime's histogram of how long goroutines
// that were ready to run waited for a thread to run them.
const schedLatencies = "/sched/latencies:seconds"

// A process is short of CPU when, over the last sampled span, a tenth of
// its goroutines made ready waited at least shortWait to run: the
// machine's cores are taken, by this process's jobs or by anything else.
// Measured on 2 cores: 3 herald processes answering 2,000 HTTP clicks a
// second beside their jobs waited 1.5-42 ms at the 90th percentile; one
// process with its simulator at 250 clicks a second, at most 0.92 ms.
const (
	shortWait  = time.Millisecond
	shortShare = 0.1
)

// cpuGauge samples the scheduler's latencies once per yieldWindow.
type cpuGauge struct {
	mu    sync.Mutex
	at    time.Time
	prev  []uint64
	short bool
}

// Short reports whether the process was short of CPU over the last
// window sampled by now.
func (g *cpuGauge) Short(now time.Time) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if now.Sub(g.at) < yieldWindow {
		return g.short
	}
	s := []rtmetrics.Sample{{Name: schedLatencies}}
	rtmetrics.Read(s)
	if s[0].Value.Kind() != rtmetrics.KindFloat64Histogram {
		return false
	}
	h := s[0].Value.Float64Histogram()
	if len(g.prev) == len(h.Counts) {
		g.short = shortOfCPU(g.prev, h.Counts, h.Buckets)
	}
	g.prev, g.at = append(g.prev[:0], h.Counts...), now
	return g.short
}

// shortOfCPU reports whether at least shortShare of the waits counted
// between two readings of the histogram (buckets are its boundaries,
// one more than the counts) lasted shortWait or more.
func shortOfCPU(prev, cur []uint64, buckets []float64) bool {
	var all, long uint64
	for i := range cur {
		d := cur[i] - prev[i]
		all += d
		if buckets[i] >= shortWait.Seconds() {
			long += d
		}
	}
	return all > 0 && float64(long) >= shortShare*float64(all)
}
