package transport

import (
	"math"
	"time"

	"github.com/jonboulle/clockwork"
)

// Global slots are handed out by the engine, not taken by whichever bucket
// worker wakes first. When the global limit binds, the order decides how
// long a burst takes: the bucket with the most work at its own limit (500
// member-role changes at 10 per 10 s) must get a slot each time its own
// limit allows one, or it falls behind and the whole burst ends later,
// however busy the other buckets kept the global limit.
//
// A waiting bucket's claim on the next free slot, best first:
//  1. the aged priority of its next request: its priority less one level
//     per AgingStep it has waited (Config.AgingStep's meaning inside a
//     bucket), so member-facing work goes first and nothing starves;
//  2. the longest drain: the time the bucket needs, at its own limit, to
//     send all it holds. A bucket Discord has not described yet counts as
//     longest, so one request learns its limit early. A bucket another
//     process on the token waits for (internal/cluster) holds requests
//     there too, which its queue here leaves out: its calls are spread
//     over the processes as jobs are, so it counts as holding its queue
//     here once for each process;
//  3. between equal drains, one another process waits for, so it is
//     handed on sooner;
//  4. the most requests queued (between buckets not described yet, the
//     best guess of the longest drain);
//  5. the older request (rank, then arrival).
//
// A wanted bucket once went before every other of its priority, whatever
// their drains: with three processes, wanted edit buckets then took every
// slot of a process's share while the member-role bucket it held, which
// nobody had asked for yet, waited 750 ms (`herald bench scale`).
//
// Slots free in bunches (all n of a period at once when the limit binds),
// and a bucket sends one request at a time: the best bucket would get one
// slot of a bunch and lesser waiters the rest before its answer came back,
// and a bucket whose own window resets just after a bunch would wait a
// whole period. So one slot is held, against lesser waiters, for the best
// bucket not waiting yet but ready within a period: its request is on the
// wire (claiming), or its own limit releases it by then (sleeping). One
// slot bounds what holding can cost to one slot's period.

// acquireGlobal asks for a global slot for b's next request: b joins the
// waiters and dispatch decides. It reports whether b holds a slot now; if
// not, b's worker waits to be woken. The lock is held.
func (e *Engine) acquireGlobal(b *bucket, now time.Time) bool {
	delete(e.claiming, b)
	e.globalWaiters[b] = true
	e.dispatch(now, b)
	return b.slot >= 0
}

// leaveGlobal takes b out of the competition for global slots: it stops
// waiting, stops claiming and gives back a slot it was granted but will
// not use. The lock is held.
func (e *Engine) leaveGlobal(b *bucket, now time.Time) {
	changed := e.claiming[b]
	delete(e.globalWaiters, b)
	delete(e.claiming, b)
	if b.slot >= 0 {
		e.global.release(b.slot)
		b.slot = -1
		changed = true
	}
	if changed {
		e.dispatch(now, b)
	}
}

// dispatch grants free global slots to the best waiting buckets, each slot
// taken on the bucket's behalf so no other worker can take it first, and
// wakes them; self (the caller's own bucket, or nil) is not woken. When no
// slot is free for the best waiter it runs again when one may have: when a
// claiming bucket asks for its next slot or stops, or when the engine's
// one global timer fires. The lock is held.
func (e *Engine) dispatch(now time.Time, self *bucket) {
	for len(e.globalWaiters) > 0 {
		best := e.bestWaiter(now)
		if best == nil {
			break
		}
		// A slot held for a better bucket not waiting yet comes first; with
		// two or more free, holding one keeps nothing from best.
		held := 0
		if d, _ := e.globalWaitAfter(now, 1); d > 0 {
			held = e.held(best, now)
		}
		if d, _ := e.globalWaitAfter(now, held); d > 0 {
			// When the slot needed is in flight, d is only an upper bound.
			e.armGlobalTimer(now, d)
			return
		}
		delete(e.globalWaiters, best)
		best.slot = e.global.take(now)
		e.lastGlobal = now
		if best != self {
			best.signal()
		}
	}
	if e.globalTimer != nil {
		e.globalTimer.Stop()
		e.globalTimer = nil
	}
}

// held is how many free slots dispatch keeps from waiter: one when a
// bucket not waiting yet has a better claim and will be ready within a
// global period, else none. The lock is held.
func (e *Engine) held(waiter *bucket, now time.Time) int {
	if len(e.claiming) == 0 && len(e.sleeping) == 0 {
		return 0
	}
	w := e.claimOf(waiter, now)
	better := func(b *bucket) bool {
		return b.queue.Len() > 0 && !b.queue[0].route.Exempt && e.claimOf(b, now).before(w)
	}
	for b := range e.claiming {
		// Ready once answered, unless its own limit then holds it.
		if !b.blockedUntil.After(now) && (!b.known || b.remaining > 0) && better(b) {
			return 1
		}
	}
	horizon := now.Add(e.cfg.GlobalPeriod)
	for b, wakes := range e.sleeping {
		if !wakes.After(horizon) && better(b) {
			return 1
		}
	}
	return 0
}

// bestWaiter returns the waiting bucket with the best claim on a global
// slot. A waiter no longer ready (its queue emptied, or its own limit now
// holds it) leaves the waiters and is woken to look again. The lock is held.
func (e *Engine) bestWaiter(now time.Time) *bucket {
	var best *bucket
	var bestClaim claim
	for b := range e.globalWaiters {
		if b.queue.Len() == 0 || b.queue[0].route.Exempt {
			delete(e.globalWaiters, b)
			b.signal()
			continue
		}
		if wait, _ := e.localWait(b, now); wait > 0 {
			delete(e.globalWaiters, b)
			b.signal()
			continue
		}
		c := e.claimOf(b, now)
		if best == nil || c.before(bestClaim) {
			best, bestClaim = b, c
		}
	}
	return best
}

// claim is a waiting bucket's claim on the next global slot.
type claim struct {
	level  int64         // aged priority of the next request: lower first
	drain  time.Duration // longer first
	wanted bool          // wanted by another process first
	queued int           // more first
	rank   time.Time     // earlier first
	seq    uint64
}

func (c claim) before(o claim) bool {
	switch {
	case c.level != o.level:
		return c.level < o.level
	case c.drain != o.drain:
		return c.drain > o.drain
	case c.wanted != o.wanted:
		return c.wanted
	case c.queued != o.queued:
		return c.queued > o.queued
	case !c.rank.Equal(o.rank):
		return c.rank.Before(o.rank)
	}
	return c.seq < o.seq
}

func (e *Engine) claimOf(b *bucket, now time.Time) claim {
	it := b.queue[0]
	aged := int64(now.Sub(it.enqueued) / e.cfg.AgingStep)
	n := b.queue.Len()
	if b.wanted {
		n *= max(e.processes, 1)
	}
	return claim{level: int64(it.priority) - aged, wanted: b.wanted, drain: b.drain(now, n), queued: b.queue.Len(), rank: it.rank, seq: it.seq}
}

// drain is how long b needs, at its own limit, to send n requests: zero
// when they fit in what its window has left, the longest possible when
// Discord has not described the bucket to this process yet — a bucket
// handed over by another process comes with its limit but not its
// window's length, which only an answer's Reset-After gives.
func (b *bucket) drain(now time.Time, n int) time.Duration {
	if !b.known || b.limit <= 0 || b.window <= 0 {
		return math.MaxInt64
	}
	avail, untilReset := b.remaining, b.resetAt.Sub(now)
	if untilReset <= 0 {
		// The window has ended: the next request opens a full one.
		avail, untilReset = b.limit, b.window
	}
	if n <= avail {
		return 0
	}
	return untilReset + time.Duration((n-avail-1)/b.limit)*b.window
}

// armGlobalTimer makes dispatch run d from now, unless it already will by
// then. One engine timer serves every waiter, so a slot freeing wakes one
// worker, not all of them. The lock is held.
func (e *Engine) armGlobalTimer(now time.Time, d time.Duration) {
	at := now.Add(d)
	if e.globalTimer != nil {
		if !e.globalTimerAt.After(at) {
			return
		}
		e.globalTimer.Stop()
	}
	var t clockwork.Timer
	t = e.clock.AfterFunc(d, func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		if e.globalTimer == t {
			e.globalTimer = nil
		}
		e.dispatch(e.clock.Now(), nil)
	})
	e.globalTimer, e.globalTimerAt = t, at
}
