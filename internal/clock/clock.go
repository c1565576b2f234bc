// Package clock is the time herald schedules its jobs by: the real clock
// in production, and in tests a clock moved forward at once, so that a
// wait of minutes (a temporary role, an auto-close) passes without
// waiting for it.
package clock

import (
	"sync/atomic"
	"time"
)

// Clock runs at real speed, ahead of real time by what Advance added. A
// nil *Clock is the real clock.
type Clock struct{ ahead atomic.Int64 }

// Now is the current time on c.
func (c *Clock) Now() time.Time {
	if c == nil {
		return time.Now()
	}
	return time.Now().Add(c.Ahead())
}

// Ahead is how far c is ahead of real time.
func (c *Clock) Ahead() time.Duration {
	if c == nil {
		return 0
	}
	return time.Duration(c.ahead.Load())
}

// Advance moves c forward by d.
func (c *Clock) Advance(d time.Duration) { c.ahead.Add(int64(d)) }
