package work

import (
	"testing"
	"time"
)

// A process is short of CPU when a tenth of the waits counted between
// two readings lasted a millisecond or more; counts from before the
// first reading do not count.
func TestShortOfCPU(t *testing.T) {
	buckets := []float64{0, 0.0001, 0.0005, 0.001, 0.005, 0.1} // five buckets
	prev := []uint64{1000, 1000, 1000, 1000, 1000}
	for _, c := range []struct {
		name  string
		cur   []uint64
		short bool
	}{
		{"no waits", []uint64{1000, 1000, 1000, 1000, 1000}, false},
		{"all short waits", []uint64{1090, 1010, 1000, 1000, 1000}, false},
		{"9 of 100 long", []uint64{1081, 1010, 1000, 1008, 1001}, false},
		{"10 of 100 long", []uint64{1080, 1010, 1000, 1009, 1001}, true},
		{"all long", []uint64{1000, 1000, 1000, 1003, 1000}, true},
	} {
		if got := shortOfCPU(prev, c.cur, buckets); got != c.short {
			t.Errorf("%s: short %v, want %v", c.name, got, c.short)
		}
	}
}

// The gauge reads Go's scheduler, at most once per window.
func TestCPUGaugeReadsTheScheduler(t *testing.T) {
	var g cpuGauge
	now := time.Now()
	g.Short(now)
	if len(g.prev) == 0 || !g.at.Equal(now) {
		t.Fatal("the gauge read no histogram of scheduler latencies")
	}
	g.Short(now.Add(yieldWindow / 2))
	if !g.at.Equal(now) {
		t.Fatal("the gauge read the scheduler again within a window")
	}
}
