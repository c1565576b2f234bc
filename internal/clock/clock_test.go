package clock

import (
	"testing"
	"time"
)

func TestNilIsTheRealClock(t *testing.T) {
	var c *Clock
	before := time.Now()
	if now := c.Now(); now.Before(before) || now.Sub(before) > time.Minute || c.Ahead() != 0 {
		t.Fatalf("nil clock: now %s, ahead %s; real %s", now, c.Ahead(), before)
	}
}

func TestAdvanceMovesNowForward(t *testing.T) {
	var c Clock
	c.Advance(time.Hour)
	c.Advance(30 * time.Minute)
	if c.Ahead() != 90*time.Minute {
		t.Fatalf("ahead %s, want 1h30m", c.Ahead())
	}
	before := time.Now().Add(90 * time.Minute)
	if now := c.Now(); now.Before(before) || now.Sub(before) > time.Minute {
		t.Fatalf("now %s, want about %s", now, before)
	}
}
