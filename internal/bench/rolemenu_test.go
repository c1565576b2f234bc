package bench

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/herald-bot/herald/internal/store/storetest"
)

// Twenty members click both options of a menu set up through herald's
// commands: every click answered in time is applied once, no faster than
// the member-role bucket allows; quick edits fold into one message edit.
// The time scale leaves Discord's 3-second answer window at 750 ms: on a
// loaded machine a click may miss it (the member sees it fail; herald
// may still apply it, its work being durable before the answer), but
// three of four are answered. Latency is the bench's to measure, not
// this test's.
func TestRoleMenuRun(t *testing.T) {
	t.Parallel()
	res, err := RunRoleMenu(t.Context(), storetest.URL(t), 0.25, 20, 5, 250)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("clicks %d, acked %d, applied %d; %d edits in %.0f ms (%d run again), %d message edits",
		res.Clicks, res.Acked, res.Applied, res.ConfigChanges, res.ConfigSpanMS, res.ConfigRetries, res.MessageEdits)
	if res.Clicks != 40 || res.Acked < 30 || res.Applied < res.Acked || res.Acked == res.Clicks && res.Applied != 40 {
		t.Errorf("clicks %d, acked %d, applied %d; want 40 clicks, at least 30 acked and every acked one applied",
			res.Clicks, res.Acked, res.Applied)
	}
	// One call per role changed, none repeated or refused (counted at the
	// end: a click answered too late may be applied after the run settled).
	if res.ExtraRoleCalls != 0 {
		t.Errorf("%d role-change calls past one per member and role, want none", res.ExtraRoleCalls)
	}
	if res.RatioP50 < 1 || res.RatioP99 < 1 || math.IsInf(res.RatioP99, 0) {
		t.Errorf("ratios to the minimum p50 %.3f, p99 %.3f: below 1 means the minimum is wrong", res.RatioP50, res.RatioP99)
	}
	if res.CallsPerClick < 3 {
		t.Errorf("%.2f calls per click; every click needs at least 3", res.CallsPerClick)
	}
	if res.RepliesLost != 0 {
		t.Errorf("%d replies lost without notice, want none", res.RepliesLost)
	}
	// A publish job runs a second after the first edit asking for it and
	// takes every edit until then: edits sent over a span need at most
	// one per second of it, and one when the span is under a second.
	if most := 1 + int(res.ConfigSpanMS/1000); res.MessageEdits < 1 || res.MessageEdits > most {
		t.Errorf("5 quick edits over %.0f ms made %d message edits, want 1 to %d", res.ConfigSpanMS, res.MessageEdits, most)
	}
}

// The minimum sends each change when its click arrives, or when the full
// window ends, in click order.
func TestEarliest(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(0, 0)
	at := func(ms ...int) []time.Time {
		var out []time.Time
		for _, m := range ms {
			out = append(out, t0.Add(time.Duration(m)*time.Millisecond))
		}
		return out
	}
	// A limit of 2 per 100 ms: the third click waits for the window to
	// end, the fourth goes with it, the fifth after the window it opened.
	got := earliest(at(0, 10, 20, 30, 250), 2, 100*time.Millisecond)
	want := []time.Duration{0, 0, 80 * time.Millisecond, 70 * time.Millisecond, 0}
	if !slices.Equal(got, want) {
		t.Errorf("earliest = %v, want %v", got, want)
	}
}

// Latencies rank beside the least each try could have taken; a try never
// observed is slower than all, so it shows in the p99 and its ratio.
func TestAgainstLeast(t *testing.T) {
	t.Parallel()
	least := []time.Duration{10 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond, 40 * time.Millisecond}
	for _, c := range []struct {
		name              string
		got               []float64
		p50, p99, ratio50 float64
		ratio99Inf        bool
	}{
		{name: "all observed", got: []float64{80, 20, 30, 40}, p50: 30, p99: 80, ratio50: 3},
		{name: "one missing", got: []float64{20, 30, 40}, p50: 30, p99: math.Inf(1), ratio50: 3, ratio99Inf: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := againstLeast(c.got, least, len(least))
			if v.p50 != c.p50 || v.p99 != c.p99 || v.least50 != 10 || v.least99 != 40 || v.ratio50 != c.ratio50 {
				t.Errorf("againstLeast = %+v", v)
			}
			if math.IsInf(v.ratio99, 1) != c.ratio99Inf {
				t.Errorf("p99 ratio %v, want infinite: %v", v.ratio99, c.ratio99Inf)
			}
		})
	}
}
