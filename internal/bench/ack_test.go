package bench

import (
	"os"
	"testing"
	"time"

	"github.com/herald-bot/herald/internal/heraldtest"
	"github.com/herald-bot/herald/internal/store/storetest"
	"github.com/herald-bot/herald/internal/testsupport/pgtest"
)

func TestMain(m *testing.M) {
	// RunHostile starts herald as a child process: this binary again.
	if os.Getenv(childEnv) == "1" {
		os.Exit(heraldtest.RunChild())
	}
	if marker := os.Getenv(portChildEnv); marker != "" {
		os.Exit(runPortChild(marker))
	}
	pgtest.Main(m)
}

// At 20 clicks a second for one second, every click reaches all three
// handlers; herald and the floor answer every one in time; the naive one must wait for the member-role bucket (10 per
// 10 s) before it answers, so at least the ten clicks past the bucket
// miss Discord's 3-second deadline — a consequence of the limits, not of
// this machine's speed.
func TestAckRunsBothHandlers(t *testing.T) {
	t.Parallel()
	res, err := RunAck(t.Context(), storetest.URL(t), []int{20}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rates) != 1 {
		t.Fatalf("rates = %+v", res.Rates)
	}
	r := res.Rates[0]
	if r.RPS != 20 || r.Herald.Interactions != 20 || r.Floor.Interactions != 20 || r.Naive.Interactions != 20 {
		t.Fatalf("result = %+v", r)
	}
	if r.Naive.MissedDeadline < 10 {
		t.Errorf("naive missed %d deadlines; the role bucket allows only 10 answers in time", r.Naive.MissedDeadline)
	}
	for _, l := range []Latency{r.Herald, r.Floor} {
		if l.P50MS <= 0 || l.P50MS > l.P99MS || l.MissedDeadline != 0 || l.Busy != 0 {
			t.Errorf("herald or floor = %+v, want every click answered in time, none busy", l)
		}
	}
	if r.HeraldOverFloorP99 <= 0 {
		t.Errorf("ratio to the floor = %v", r.HeraldOverFloorP99)
	}
}

func TestRank(t *testing.T) {
	t.Parallel()
	sorted := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	if p := rank(sorted, 50, 10, 3000); p != 5 {
		t.Errorf("p50 = %v", p)
	}
	if p := rank(sorted, 99, 10, 3000); p != 10 {
		t.Errorf("p99 = %v", p)
	}
	// Two of ten never answered: p95 is the missing value.
	if p := rank(sorted[:8], 95, 10, 3000); p != 3000 {
		t.Errorf("p95 with missed answers = %v", p)
	}
}
