package transport

import "time"

// globalLimiter allows at most n requests per period, measured from when
// each request was answered: a request may start only once the one n
// places before it finished at least period ago. Discord counts a request
// when it arrives, which is no later than its answer, so no window Discord
// may draw — sliding or opened by its first arrival — ever sees more than n,
// whatever the latency. The cost is one round trip per window.
type globalLimiter struct {
	n      int // the ring's size: the bot's whole global limit
	period time.Duration
	slots  []slot // ring of the last n requests
	next   int
}

type slot struct {
	at       time.Time // when it was answered (while in flight: sent)
	inFlight bool
}

func newGlobalLimiter(n int, period time.Duration) *globalLimiter {
	return &globalLimiter{n: n, period: period, slots: make([]slot, 0, n)}
}

// waitAfter is how long until k+1 more requests may have started, slots
// being taken in order, when this process may use share of the limit,
// from none (its turn has not come, share.go) to all of it: a request may
// start once the one share places before it finished a period ago. The
// ring keeps the whole limit's history, so a share can grow back at once.
// blocked means the slot needed is still in flight: the wait ends when
// that request is answered, and the period is only an upper bound to
// sleep.
func (g *globalLimiter) waitAfter(now time.Time, k, share int) (d time.Duration, blocked bool) {
	share = min(share, g.n)
	if k >= share {
		return g.period, true
	}
	// The request this one must follow: share places back from the next,
	// k+1 of which are the ones before it here.
	back := share - k
	if back > len(g.slots) {
		return 0, false
	}
	newest := len(g.slots) - 1 // while the ring fills, next stays 0
	if len(g.slots) == g.n {
		newest = (g.next - 1 + g.n) % g.n
	}
	s := g.slots[(newest-(back-1)+g.n)%g.n]
	if s.inFlight {
		return g.period, true
	}
	return max(s.at.Add(g.period).Sub(now), 0), false
}

// take starts a request; call it only when wait returned 0. The returned
// index is handed to done when the request is answered.
func (g *globalLimiter) take(now time.Time) int {
	if len(g.slots) < g.n {
		g.slots = append(g.slots, slot{at: now, inFlight: true})
		return len(g.slots) - 1
	}
	i := g.next
	g.slots[i] = slot{at: now, inFlight: true}
	g.next = (g.next + 1) % g.n
	return i
}

// done records when the request in slot i was answered (or failed).
func (g *globalLimiter) done(i int, now time.Time) { g.slots[i] = slot{at: now} }

// release gives back slot i, taken but never sent: nothing reached Discord,
// so it counts as long free. Capacity comes back when the ring reaches i
// again, which errs on the safe side.
func (g *globalLimiter) release(i int) { g.slots[i] = slot{} }

// count is the number of requests in flight or answered within the last
// period.
func (g *globalLimiter) count(now time.Time) int {
	c := 0
	for _, s := range g.slots {
		if s.inFlight || now.Sub(s.at) < g.period {
			c++
		}
	}
	return c
}
