package work

import (
	"os"
	"path/filepath"
	"strconv"
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

// PSI's "some" total is read from its line, whatever the order of its
// fields; a file without one is no reading.
func TestReadStalled(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name, text string
		want       time.Duration
		ok         bool
	}{
		{"machine", "some avg10=5.85 avg60=31.19 avg300=33.72 total=308174292\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", 308174292 * time.Microsecond, true},
		{"fields reordered", "full total=7\nsome total=42 avg10=0.00\n", 42 * time.Microsecond, true},
		{"no some line", "full avg10=0.00 total=9\n", 0, false},
		{"garbled total", "some total=lots\n", 0, false},
	} {
		path := filepath.Join(dir, c.name)
		if err := os.WriteFile(path, []byte(c.text), 0o600); err != nil {
			t.Fatal(err)
		}
		if got, ok := readStalled(path); got != c.want || ok != c.ok {
			t.Errorf("%s: %v %v, want %v %v", c.name, got, ok, c.want, c.ok)
		}
	}
	if _, ok := readStalled(filepath.Join(dir, "absent")); ok {
		t.Error("a missing file gave a reading")
	}
}

func TestStalledShare(t *testing.T) {
	for _, c := range []struct {
		prev, cur, span time.Duration
		want            float64
	}{
		{0, 0, time.Second, 0},
		{time.Second, time.Second + 250*time.Millisecond, time.Second, 0.25},
		{0, 500 * time.Millisecond, 250 * time.Millisecond, 2}, // several tasks waiting at once
		{time.Second, 0, time.Second, 0},                       // the counter went back: no reading
		{0, time.Second, 0, 0},
	} {
		if got := stalledShare(c.prev, c.cur, c.span); got != c.want {
			t.Errorf("stalledShare(%v, %v, %v) = %v, want %v", c.prev, c.cur, c.span, got, c.want)
		}
	}
}

// A machine whose tasks wait for a CPU a quarter of the time makes the
// process short, whatever its own goroutines see; the first reading only
// sets where the count starts.
func TestCPUGaugeReadsPressure(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpu.pressure")
	stall := func(us int) {
		if err := os.WriteFile(path, []byte("some avg10=0.00 avg60=0.00 avg300=0.00 total="+strconv.Itoa(us)+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	stall(1_000_000)
	g := &cpuGauge{pressure: path}
	now := time.Now()
	g.Short(now)
	if g.stalled != time.Second {
		t.Fatalf("the gauge kept %v of stall, want 1s", g.stalled)
	}
	stall(1_000_000 + int(yieldWindow.Microseconds())/4)
	if !g.Short(now.Add(yieldWindow)) {
		t.Error("a quarter of the window stalled did not make the process short")
	}
}
