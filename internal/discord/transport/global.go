package transport

import "time"

// slidingWindow allows at most n events in any period-long window. It is
// stricter than Discord's fixed windows, so it never exceeds them wherever
// their boundaries fall.
type slidingWindow struct {
	n      int
	period time.Duration
	times  []time.Time // ring of the last n event times
	next   int
}

func newSlidingWindow(n int, period time.Duration) *slidingWindow {
	return &slidingWindow{n: n, period: period, times: make([]time.Time, 0, n)}
}

// wait is how long until one more event fits.
func (w *slidingWindow) wait(now time.Time) time.Duration {
	if len(w.times) < w.n {
		return 0
	}
	oldest := w.times[w.next]
	if d := oldest.Add(w.period).Sub(now); d > 0 {
		return d
	}
	return 0
}

// take records an event; call it only when wait returned 0.
func (w *slidingWindow) take(now time.Time) {
	if len(w.times) < w.n {
		w.times = append(w.times, now)
		return
	}
	w.times[w.next] = now
	w.next = (w.next + 1) % w.n
}

// count is the number of events in the window ending now.
func (w *slidingWindow) count(now time.Time) int {
	c := 0
	for _, t := range w.times {
		if now.Sub(t) < w.period {
			c++
		}
	}
	return c
}
