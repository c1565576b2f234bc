// Package clockwatch wraps a clockwork fake clock so a test can tell
// whether a step of the clock fired a timer armed through it: the way to
// check that a component that waits only on its clock did not wake,
// without a pause in real time to see whether it acts.
package clockwatch

import (
	"sync"
	"time"

	"github.com/jonboulle/clockwork"
)

// Clock is a fake clock that keeps when each timer armed through it is
// due. Timers armed on the wrapped clock directly (a simulator's own)
// are not seen.
type Clock struct {
	*clockwork.FakeClock
	mu    sync.Mutex
	armed map[*timer]time.Time // pending timers, by when they are due
	woke  int                  // timers the last Advance fired
}

// Watch wraps c; give the result to the component under test.
func Watch(c *clockwork.FakeClock) *Clock {
	return &Clock{FakeClock: c, armed: map[*timer]time.Time{}}
}

type timer struct {
	clockwork.Timer
	c *Clock
}

// NewTimer is clockwork's, noted.
func (c *Clock) NewTimer(d time.Duration) clockwork.Timer { return c.arm(d, nil) }

// AfterFunc is clockwork's, noted.
func (c *Clock) AfterFunc(d time.Duration, f func()) clockwork.Timer { return c.arm(d, f) }

// arm starts a timer and notes when it is due; c.mu is held across both,
// so no step of the clock comes between them.
func (c *Clock) arm(d time.Duration, f func()) clockwork.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &timer{c: c}
	if f != nil {
		t.Timer = c.FakeClock.AfterFunc(d, f)
	} else {
		t.Timer = c.FakeClock.NewTimer(d)
	}
	if d > 0 { // else it fired at once
		c.armed[t] = c.FakeClock.Now().Add(d)
	}
	return t
}

func (t *timer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	delete(t.c.armed, t)
	return t.Timer.Stop()
}

func (t *timer) Reset(d time.Duration) bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	delete(t.c.armed, t)
	if d > 0 {
		t.c.armed[t] = t.c.FakeClock.Now().Add(d)
	}
	return t.Timer.Reset(d)
}

// Advance moves the clock as FakeClock.Advance does, which fires exactly
// the timers due by then, and counts the watched ones among them.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	end := c.FakeClock.Now().Add(d)
	c.woke = 0
	for t, at := range c.armed {
		if !end.Before(at) {
			delete(c.armed, t)
			c.woke++
		}
	}
	c.FakeClock.Advance(d)
}

// Pending is how many watched timers wait.
func (c *Clock) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.armed)
}

// Woken is how many watched timers the last Advance fired.
func (c *Clock) Woken() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.woke
}
