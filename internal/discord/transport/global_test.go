package transport

import (
	"testing"
	"time"
)

// starts counts how many requests begin within one period, each answered
// at once, under share.
func starts(g *globalLimiter, now time.Time, share int) int {
	n := 0
	for {
		if d, blocked := g.waitAfter(now, 0, share); d > 0 || blocked {
			return n
		}
		g.done(g.take(now), now)
		n++
	}
}

// A process's share of the global limit bounds what it starts in a
// period; the share can shrink and grow while the ring keeps the whole
// limit's history, and with none nothing starts.
func TestGlobalShare(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	g := newGlobalLimiter(10, time.Second)
	if n := starts(g, now, 10); n != 10 {
		t.Fatalf("whole limit: %d starts, want 10", n)
	}
	now = now.Add(time.Second)
	if n := starts(g, now, 3); n != 3 {
		t.Errorf("share 3: %d starts, want 3", n)
	}
	now = now.Add(500 * time.Millisecond)
	// 3 started half a period ago: 7 more fit in the period.
	if n := starts(g, now, 10); n != 7 {
		t.Errorf("share back to 10 half a period on: %d starts, want 7", n)
	}
	// No share (a process waiting for its turn, share.go): nothing starts
	// however long ago the last request was.
	if n := starts(g, now.Add(time.Hour), 0); n != 0 {
		t.Errorf("share 0: %d starts", n)
	}
}

// Shared by processes, each invalid-request budget is divided too.
func TestInvalidBudgetShare(t *testing.T) {
	cfg := Config{}
	cfg.defaults()
	b := newInvalidBudgets(cfg)
	b.share(cfg, 3)
	if b.limits[budgetBot] != 7000/3 || b.limits[budgetWebhooks] != 1000/3 {
		t.Errorf("limits %v, want a third of 7000, 1000, 1000", b.limits)
	}
	b.share(cfg, 1)
	if b.limits[budgetBot] != 7000 {
		t.Errorf("one process: %v", b.limits)
	}
}

// The shares of processes on one token take turns with the limit's
// remainder: in any period Discord may draw, what the processes may send
// — each its largest share at any moment of that period, since a share
// it gave up still counts there — never adds up to more than the limit;
// and over a round each process has limit/processes, less what a turn's
// settling costs.
func TestSharesTakeTurns(t *testing.T) {
	t.Parallel()
	const period = time.Second
	start := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct{ limit, processes int }{{50, 3}, {5, 3}, {5, 2}, {50, 1}, {7, 7}, {2, 3}, {50, 4}} {
		engines := make([]*Engine, tc.processes)
		for rank := range engines {
			engines[rank] = New(Config{GlobalLimit: tc.limit, GlobalPeriod: period})
			engines[rank].Share(tc.processes, rank)
		}
		step := period / 20
		round := time.Duration(shareTurn*tc.processes) * period
		used := make([]int, tc.processes)
		samples := 0
		for at := start; at.Before(start.Add(2 * round)); at = at.Add(step) {
			window := 0
			for rank, e := range engines {
				most := 0
				for back := time.Duration(0); back <= period; back += step {
					most = max(most, e.globalShare(at.Add(-back)))
				}
				window += most
				used[rank] += e.globalShare(at)
			}
			samples++
			if window > tc.limit {
				t.Fatalf("limit %d over %d processes: %d may be sent in the period before %s", tc.limit, tc.processes, window, at.Sub(start))
			}
		}
		fair := float64(tc.limit) / float64(tc.processes)
		for rank, u := range used {
			avg := float64(u) / float64(samples)
			// Each turn a gaining process waits 1.1 periods of its 10.
			if avg > fair+1e-9 || avg < fair-0.11*float64(tc.limit%tc.processes)/float64(tc.processes)-1e-9 {
				t.Errorf("limit %d over %d processes: rank %d had %.3f a period on average, want about %.3f", tc.limit, tc.processes, rank, avg, fair)
			}
		}
	}
}
