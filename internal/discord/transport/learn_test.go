package transport

import (
	"net/http"
	"testing"
	"time"

	"github.com/herald-bot/herald/internal/testsupport/wait"
)

func TestLearnedGlobal(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1_800_000_000, 0)
	probe := probePeriods * time.Second
	tests := []struct {
		name string
		l    learnedGlobal
		at   time.Duration // after t0
		want int
	}{
		{"nothing learned", learnedGlobal{}, 0, 50},
		{"just cut", learnedGlobal{cut: 12, at: t0}, 0, 12},
		{"before the first probe", learnedGlobal{cut: 12, at: t0}, probe - time.Millisecond, 12},
		{"first probe", learnedGlobal{cut: 12, at: t0}, probe, 24},
		{"second probe", learnedGlobal{cut: 12, at: t0}, 2 * probe, 48},
		{"back to the limit", learnedGlobal{cut: 12, at: t0}, 3 * probe, 50},
		{"long after", learnedGlobal{cut: 1, at: t0}, 24 * time.Hour, 50},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.l.limit(t0.Add(tt.at), 50, time.Second); got != tt.want {
				t.Errorf("limit = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestLearnHalvesOncePerExcess(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1_800_000_000, 0)
	var l learnedGlobal
	l.learn(t0, 30, 50, time.Second)
	if l.cut != 15 {
		t.Fatalf("cut to %d after 30 sent, want 15", l.cut)
	}
	// The other requests of the same excess come back 429 too.
	l.learn(t0.Add(300*time.Millisecond), 30, 50, time.Second)
	if l.cut != 15 {
		t.Fatalf("cut again to %d within a period", l.cut)
	}
	// Still too fast: halve what the cut allows, not what was sent.
	l.learn(t0.Add(2*time.Second), 40, 50, time.Second)
	if l.cut != 7 {
		t.Fatalf("cut to %d, want 7", l.cut)
	}
	for range 5 {
		l.learn(l.at.Add(2*time.Second), 40, 50, time.Second)
	}
	if l.cut != 1 {
		t.Fatalf("cut to %d, want never below 1", l.cut)
	}
}

// A storm at a rate of 1 for 200 periods: every probe up meets a global
// 429 and the next one waits twice as long, so the storm costs a handful
// of cuts instead of one every probePeriods; once Discord's limit is back,
// the probes climb to the full rate and a later storm starts afresh.
func TestProbesBackOffInALongStorm(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1_800_000_000, 0)
	const full, storm = 50, 200
	var l learnedGlobal
	cuts := 0
	for p := range storm {
		now := t0.Add(time.Duration(p) * time.Second)
		if l.limit(now, full, time.Second) > 1 { // more than Discord takes: a global 429
			l.learn(now, l.limit(now, full, time.Second), full, time.Second)
			cuts++
		}
	}
	// Down from 50 in 6 halvings, then probes after 5, 10, 20, 40, 80, 80
	// periods: 6 + 6 = 12; one every 5 periods would be 6 + 39.
	if cuts > 12 {
		t.Errorf("%d global 429s in a storm of %d periods, want at most 12", cuts, storm)
	}
	if l.every != maxProbePeriods {
		t.Errorf("probes every %d periods at the storm's end, want %d", l.every, maxProbePeriods)
	}
	end := t0.Add(storm * time.Second)
	if got := l.limit(end.Add(7*maxProbePeriods*time.Second), full, time.Second); got != full {
		t.Errorf("limit %d long after the storm, want %d", got, full)
	}
	l.learn(end.Add(7*maxProbePeriods*time.Second), 30, full, time.Second)
	if l.every != probePeriods || l.cut != 15 {
		t.Errorf("a new storm: probes every %d periods from %d, want %d from 15", l.every, l.cut, probePeriods)
	}
}

// A global 429 lowers the rate the engine sends at, and the rate comes
// back by probes: Snapshot shows it as the global limit in use. Only the
// first try meets the 429: its retry, which the first clock step wakes,
// is answered, or it would race the snapshots with a cut of its own.
func TestGlobal429LowersTheRate(t *testing.T) {
	t.Parallel()
	d := newDiscord(t, func(r *http.Request, n int) reply {
		if r.URL.Path == "/api/v10/channels/1004" && n == 1 {
			return reply{status: 429, header: map[string]string{"X-RateLimit-Scope": "global", "X-RateLimit-Global": "true", "Retry-After": "1"},
				body: `{"message":"You are being rate limited.","retry_after":1,"global":true}`}
		}
		return ok()
	})
	e := d.engine(Config{GlobalLimit: 10, GlobalPeriod: time.Second})
	ctx := t.Context()
	// Four answered, then the fifth meets the 429: five sent in the period.
	for i := range 4 {
		d.send(ctx, e, "GET", "/channels/"+itoa(1000+i))
	}
	d.waitRequests(4)
	limited := d.send(ctx, e, "GET", "/channels/1004")
	d.waitRequests(5)
	wait.Until(t, "the global 429 learned", func() bool { return e.Snapshot().GlobalLimit != 10 })
	if got := e.Snapshot().GlobalLimit; got != 2 {
		t.Fatalf("global limit %d after a 429 with 5 sent, want 2", got)
	}
	for _, want := range []int{4, 8, 10} {
		d.clk.Advance(probePeriods * time.Second)
		if got := e.Snapshot().GlobalLimit; got != want {
			t.Fatalf("global limit %d after a probe, want %d", got, want)
		}
	}
	if c := finished(t, limited); c.err != nil || c.resp.StatusCode != http.StatusOK {
		t.Fatalf("the retried request: %v, %+v", c.err, c.resp)
	}
}
