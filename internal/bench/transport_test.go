package bench

import (
	"testing"
	"time"
)

func TestMinimum(t *testing.T) {
	t.Parallel()
	tests := []struct {
		requests, n int
		window      time.Duration
		want        time.Duration
	}{
		{0, 5, time.Second, 0},
		{5, 5, time.Second, 0},
		{6, 5, time.Second, time.Second},
		{50, 5, 5 * time.Second, 45 * time.Second},
		{500, 10, 10 * time.Second, 490 * time.Second},
		{2000, 50, time.Second, 39 * time.Second},
	}
	for _, tc := range tests {
		if got := minimum(tc.requests, tc.n, tc.window); got != tc.want {
			t.Errorf("minimum(%d, %d, %s) = %s, want %s", tc.requests, tc.n, tc.window, got, tc.want)
		}
	}
	if m := MixedBurst().Min; m != 490*time.Second {
		t.Errorf("mixed burst minimum = %s, want 490s (the member-role bucket)", m)
	}
	if m := GlobalBurst().Min; m != 39*time.Second {
		t.Errorf("global burst minimum = %s, want 39s", m)
	}
	if m := GlobalBindsBurst().Min; m != 490*time.Second {
		t.Errorf("global-binds burst minimum = %s, want 490s (the member-role bucket; the global limit needs 299s)", m)
	}
	// Below 1,500 counted requests per 490 s the global limit sets it.
	if m := mixedBurst("x", mixedDefault, 2).Min; m != 749*time.Second {
		t.Errorf("mixed burst at 2/s minimum = %s, want 749s (the global limit)", m)
	}
}

// A small burst runs end to end through both clients against the
// simulator, and every call the workload makes reaches it.
func TestSmallBurstsRun(t *testing.T) {
	t.Parallel()
	small := mixedSize{channels: 2, editsPer: 6, members: 3, roles: 4, followups: 5}
	for _, b := range []Burst{
		mixedBurst("mixed", small, globalLimit),
		globalBurst(1, 60),
		mixedBurst("global-binds", small, 2),
	} {
		scale := 0.2 / b.Min.Seconds() // about 200 ms
		res, err := b.Run(scale)
		if err != nil {
			t.Fatal(err)
		}
		for name, r := range map[string]ClientResult{"herald": res.Herald, "discordgo": res.Discordgo} {
			if r.Failed != 0 || r.Unfinished != 0 {
				t.Errorf("%s burst, %s: %d failed, %d unfinished", b.Name, name, r.Failed, r.Unfinished)
			}
			want := 2*6 + 3*4 + 5
			if b.Name == "global" {
				want = 60
			}
			if r.Requests < want || r.Seconds <= 0 || r.RatioToMin <= 0 {
				t.Errorf("%s burst, %s: %+v, want at least %d requests", b.Name, name, r, want)
			}
		}
	}
}
