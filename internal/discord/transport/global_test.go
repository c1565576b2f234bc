package transport

import (
	"testing"
	"time"
)

// starts counts how many requests begin within one period, each answered
// at once, under the limiter's current share.
func starts(g *globalLimiter, now time.Time) int {
	n := 0
	for {
		if d, blocked := g.wait(now); d > 0 || blocked {
			return n
		}
		g.done(g.take(now), now)
		n++
	}
}

// A process's share of the global limit bounds what it starts in a
// period; the share can shrink and grow while the ring keeps the whole
// limit's history, and it is never below one.
func TestGlobalShare(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	g := newGlobalLimiter(10, time.Second)
	if n := starts(g, now); n != 10 {
		t.Fatalf("whole limit: %d starts, want 10", n)
	}
	now = now.Add(time.Second)
	g.setShare(3)
	if n := starts(g, now); n != 3 {
		t.Errorf("share 3: %d starts, want 3", n)
	}
	now = now.Add(500 * time.Millisecond)
	g.setShare(10)
	// 3 started half a period ago: 7 more fit in the period.
	if n := starts(g, now); n != 7 {
		t.Errorf("share back to 10 half a period on: %d starts, want 7", n)
	}
	g.setShare(0)
	if g.share != 1 {
		t.Errorf("share 0 became %d, want 1", g.share)
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

// The shares of processes on one token add up to the whole global limit:
// the remainder of the division goes to the first ranks.
func TestSharesAddUpToTheLimit(t *testing.T) {
	for _, tc := range []struct{ limit, processes int }{{50, 3}, {5, 3}, {5, 2}, {50, 1}, {7, 7}, {2, 3}} {
		total := 0
		for rank := range tc.processes {
			e := New(Config{GlobalLimit: tc.limit})
			e.Share(tc.processes, rank)
			total += e.Health().GlobalShare
		}
		want := max(tc.limit, tc.processes) // a process is never left without one
		if total != want {
			t.Errorf("limit %d over %d processes: shares add up to %d, want %d", tc.limit, tc.processes, total, want)
		}
	}
}
