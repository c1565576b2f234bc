package work

import (
	"bufio"
	"os"
	rtmetrics "runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"time"
)

// A process is short of CPU when either of two signals says so over the
// last sampled span:
//
//   - Go's scheduler: a tenth of the goroutines made ready waited at
//     least shortWait to run (measured on 2 cores: 3 herald processes
//     answering 2,000 HTTP clicks a second beside their jobs waited
//     1.5-42 ms at the 90th percentile; one process with its simulator
//     at 250 clicks a second, at most 0.92 ms);
//   - Linux's pressure stall information (PSI): for at least
//     pressureShare of the span, some task ready to run found no CPU
//     (other processes — Postgres, another herald, a neighbour — hold
//     the cores).
//
// The scheduler alone misses a machine that is full: while the kernel
// keeps this process's threads off the CPU its goroutines are not
// "ready", so their waits are never counted. Measured on 2 cores, 3
// herald processes answering an HTTP burst beside their simulator and
// Postgres: the scheduler's signal held 74-83 of ~2,700 jobs per
// process, while PSI read 0.48-0.96 of each half second of the burst;
// idle 0.00-0.03, the simulator alone at 1.9 cores 0.13-0.19.
const (
	schedLatencies = "/sched/latencies:seconds"
	shortWait      = time.Millisecond
	shortShare     = 0.1
	pressureShare  = 0.25
)

// cpuGauge samples both signals once per yieldWindow.
type cpuGauge struct {
	// pressure is the PSI file read ("": none, the scheduler decides).
	pressure string

	mu      sync.Mutex
	at      time.Time
	prev    []uint64
	stalled time.Duration // PSI's "some" total at the last sample
	short   bool
}

// newCPUGauge reads the pressure of this process's cgroup (a container's
// own), else the machine's.
func newCPUGauge() *cpuGauge {
	for _, p := range []string{cgroupPressure(), "/proc/pressure/cpu"} {
		if _, ok := readStalled(p); ok {
			return &cpuGauge{pressure: p}
		}
	}
	return &cpuGauge{}
}

// cgroupPressure is the cpu.pressure file of this process's cgroup v2
// ("" when it is not in one).
func cgroupPressure() string {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return ""
	}
	for line := range strings.Lines(string(b)) {
		if path, ok := strings.CutPrefix(strings.TrimSpace(line), "0::"); ok {
			return "/sys/fs/cgroup" + strings.TrimSuffix(path, "/") + "/cpu.pressure"
		}
	}
	return ""
}

// Short reports whether the process was short of CPU over the last
// window sampled by now.
func (g *cpuGauge) Short(now time.Time) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if now.Sub(g.at) < yieldWindow {
		return g.short
	}
	short := false
	s := []rtmetrics.Sample{{Name: schedLatencies}}
	rtmetrics.Read(s)
	if s[0].Value.Kind() == rtmetrics.KindFloat64Histogram {
		h := s[0].Value.Float64Histogram()
		short = len(g.prev) == len(h.Counts) && shortOfCPU(g.prev, h.Counts, h.Buckets)
		g.prev = append(g.prev[:0], h.Counts...)
	}
	if g.pressure != "" {
		if stalled, ok := readStalled(g.pressure); ok {
			short = short || (!g.at.IsZero() && stalledShare(g.stalled, stalled, now.Sub(g.at)) >= pressureShare)
			g.stalled = stalled
		}
	}
	g.short, g.at = short, now
	return short
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

// stalledShare is the part of span during which some task waited for a
// CPU, from two readings of PSI's "some" total.
func stalledShare(prev, cur, span time.Duration) float64 {
	if span <= 0 || cur < prev {
		return 0
	}
	return float64(cur-prev) / float64(span)
}

// readStalled reads the "some" line's total (microseconds) of a PSI
// file: "some avg10=0.00 avg60=0.00 avg300=0.00 total=12345".
func readStalled(path string) (time.Duration, bool) {
	if path == "" {
		return 0, false
	}
	f, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || fields[0] != "some" {
			continue
		}
		for _, kv := range fields[1:] {
			if v, ok := strings.CutPrefix(kv, "total="); ok {
				us, err := strconv.ParseUint(v, 10, 63)
				return time.Duration(us) * time.Microsecond, err == nil
			}
		}
	}
	return 0, false
}
