package transport

import "time"

// A process with nothing to send lends most of its share of the global
// limit to the others on the token (internal/cluster carries the loans):
// with shares fixed, work left on one process at the end of a burst went
// at a third of the limit while two processes idled (`herald bench scale`).
//
// A loan never lets the processes together exceed the limit in any window
// Discord may draw. The lender stops using the slots when it lends them,
// and what it sent with them stays in Discord's window for a period, so a
// borrower uses them only from a settle (a period and a tenth) after the
// loan's start; the borrower stops at the loan's end, and what it sent
// stays for a period, so the lender takes them back only a settle after
// the end. A loan is extended while the lender stays idle; one the
// borrower does not hear of in time ends for it, which only wastes slots.

// lendAfter is how many global periods a process must have had nothing to
// send before it lends: a moment between two jobs is not idleness, and a
// lender with work again waits up to a loan's end for its slots.
const lendAfter = 10

// loan is slots of another process's share this one may use in
// [from+settle, until].
type loan struct {
	slots       int
	from, until time.Time
}

// settle is how long a slot given up still counts in Discord's window: a
// period, plus a tenth for clocks a little apart.
func (e *Engine) settle() time.Duration {
	return e.cfg.GlobalPeriod + e.cfg.GlobalPeriod/10
}

// Lendable is how many global slots a period this process may lend now:
// none while it has a request that needs one or had one in the last
// lendAfter periods, else its even share less a quarter it keeps, so
// work arriving meanwhile still moves.
func (e *Engine) Lendable() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.clock.Now()
	if e.processes < 2 || now.Sub(e.lastGlobal) < lendAfter*e.cfg.GlobalPeriod ||
		len(e.globalWaiters)+len(e.claiming)+len(e.sleeping) > 0 {
		return 0
	}
	// Requests waiting for a bucket another process holds are in none of
	// the maps above.
	for _, b := range e.buckets {
		if b.queue.Len() > 0 && !b.queue[0].route.Exempt {
			return 0
		}
	}
	base := e.cfg.GlobalLimit / e.processes
	return base - base/4
}

// Short is how many requests wait for a global slot (their buckets
// would send them now): what slots another lends would be used for.
func (e *Engine) Short() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for b := range e.globalWaiters {
		n += b.queue.Len()
	}
	return n
}

// Lend gives slots of this process's share to others until until: it
// stops using them now and takes them back a settle after until. A lender
// extending its loan calls it again with a later until.
func (e *Engine) Lend(slots int, until time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.clock.Now().After(e.lentUntil.Add(e.settle())) {
		e.lentSlots = 0
	}
	e.lentSlots, e.lentUntil = max(e.lentSlots, slots), later(e.lentUntil, until)
}

// Borrow records slots another process (lender) lends this one from from
// to until; a loan with the same lender and from extends the one before,
// a new one replaces it.
func (e *Engine) Borrow(lender string, slots int, from, until time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.clock.Now()
	if old, ok := e.borrowed[lender]; ok && old.from.Equal(from) {
		until = later(old.until, until)
	}
	e.borrowed[lender] = loan{slots: slots, from: from, until: until}
	// The slots become usable at from+settle: waiters look again then.
	if len(e.globalWaiters) > 0 {
		e.armGlobalTimer(now, max(from.Add(e.settle()).Sub(now), 0))
	}
}

// loans is what the loans add to this process's share at now: the
// borrowed slots usable then, less the slots lent. The lock is held.
func (e *Engine) loans(now time.Time) int {
	n, settle := 0, e.settle()
	if !now.After(e.lentUntil.Add(settle)) {
		n -= e.lentSlots
	}
	for lender, l := range e.borrowed {
		switch {
		case now.After(l.until):
			delete(e.borrowed, lender)
		case !now.Before(l.from.Add(settle)):
			n += l.slots
		}
	}
	return n
}
