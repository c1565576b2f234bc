package rolemenu

import (
	"testing"
	"time"
)

// Which waiting members are told their change comes after the reply
// closes: a token of 15 minutes, the job every minute, the reply closing
// at 14 minutes.
func TestLate(t *testing.T) {
	t.Parallel()
	received := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	const life = 15 * time.Minute
	for _, tc := range []struct {
		name  string
		at    time.Duration // after the click
		ahead int
		rate  float64 // members a second
		tell  bool
		eta   time.Duration // after the click; 0: unknown
	}{
		{"served well before the reply closes", 8 * time.Minute, 59, 1, false, 9 * time.Minute},
		{"expected within two runs of the close", 8 * time.Minute, 299, 1, true, 13 * time.Minute},
		{"expected after the close", 8 * time.Minute, 599, 1, true, 18 * time.Minute},
		{"still waiting in the last two runs: told, however soon", 12*time.Minute + 30*time.Second, 0, 1, true, 12*time.Minute + 31*time.Second},
		{"stalled: no rate, told without a time", 8 * time.Minute, 3, 0, true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := waiting{received: received, ahead: tc.ahead}
			tell, closes, eta := c.late(received.Add(tc.at), life, tc.rate)
			if tell != tc.tell {
				t.Errorf("tell = %t, want %t", tell, tc.tell)
			}
			if want := received.Add(14 * time.Minute); !closes.Equal(want) {
				t.Errorf("closes at %s, want %s", closes, want)
			}
			switch {
			case tc.eta == 0 && !eta.IsZero():
				t.Errorf("eta %s, want unknown", eta)
			case tc.eta != 0 && !eta.Equal(received.Add(tc.eta)):
				t.Errorf("eta %s after the click, want %s", eta.Sub(received), tc.eta)
			}
		})
	}
}
