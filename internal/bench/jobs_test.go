package bench

import (
	"math"
	"testing"
	"time"

	"github.com/herald-bot/herald/internal/store/storetest"
)

// A few hundred no-op jobs through herald's job layer and bare River:
// every one is enqueued, reaches River and is worked on both sides, with
// the same connection budget, and every ratio is a finite, positive number.
func TestJobsRun(t *testing.T) {
	t.Parallel()
	res, err := RunJobs(t.Context(), storetest.URL(t), JobsOptions{Jobs: 200, Callers: 8, Rate: 20, Duration: time.Second, Workers: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", res)
	for name, s := range map[string]JobsSide{"herald": res.Herald, "bare": res.Bare} {
		if s.Worked != 20 || s.EnqueuedPerS <= 0 || s.InRiverPerS <= 0 || s.InRiverPerS > s.EnqueuedPerS*1.0001 {
			t.Errorf("%s: %+v; want 20 worked and positive rates, none reaching River faster than it was enqueued", name, s)
		}
		if s.EnqueueP50MS <= 0 || s.EnqueueP50MS > s.EnqueueP99MS || s.WorkedP50MS <= 0 || s.WorkedP50MS > s.WorkedP99MS {
			t.Errorf("%s: latencies %+v", name, s)
		}
	}
	if res.Herald.Conns != res.Bare.Conns {
		t.Errorf("herald may hold %d connections, bare River %d: the sides must share one budget", res.Herald.Conns, res.Bare.Conns)
	}
	for name, r := range map[string]float64{"enqueue p50": res.EnqueueP50Ratio, "enqueue p99": res.EnqueueP99Ratio,
		"enqueued/s": res.EnqueuedPerSRatio, "in River/s": res.InRiverPerSRatio, "worked p50": res.WorkedP50Ratio, "worked p99": res.WorkedP99Ratio} {
		if r <= 0 || math.IsInf(r, 0) || math.IsNaN(r) {
			t.Errorf("%s ratio = %v", name, r)
		}
	}
}
