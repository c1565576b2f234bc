package transport

import "time"

// Processes of herald on one token divide the bot's global limit
// (internal/cluster tells each how many are live and its rank). The
// division leaves a remainder — 5 over 3 is 1 each and 2 over — and a
// remainder kept by the same ranks gives them lasting shares of 2, 2 and
// 1: with a third of the work each, the last finishes far behind. So the
// extra slots take turns: every shareTurn periods they move one rank on,
// and over a round each process has limit/processes.
//
// Moving a slot must never let the processes together exceed the limit
// in any window Discord may draw: the process that loses the slot stops
// using it at once, but what it sent with it stays in Discord's window
// for a period. So the process that gains it starts using it only a
// period (plus a tenth, for clocks a little apart) after the turn began.
// That costs each turn a tenth of one extra slot's use, about 2% of a
// 5/s limit over 3 processes.
const shareTurn = 10

// globalShare is how many of the global limit's slots in a period this
// process may use at now: its share with what it lent or borrowed
// (loan.go), or less while it learns a lower global limit from Discord's
// 429s (learn.go). The lock is held.
func (e *Engine) globalShare(now time.Time) int {
	return min(max(e.configuredShare(now)+e.loans(now), 0), e.learned.limit(now, e.cfg.GlobalLimit, e.cfg.GlobalPeriod))
}

// configuredShare is this process's share of the configured global limit.
func (e *Engine) configuredShare(now time.Time) int {
	n := max(e.processes, 1)
	base, extra := e.cfg.GlobalLimit/n, e.cfg.GlobalLimit%n
	if extra == 0 {
		return base
	}
	turn := shareTurn * e.cfg.GlobalPeriod
	has := func(t time.Time) bool {
		k := t.UnixNano() / int64(turn)
		return (int64(e.rank)+k)%int64(n) < int64(extra)
	}
	if has(now) && has(now.Add(-e.settle())) {
		return base + 1
	}
	return base
}

// Share makes this process's limits its share of the bot's when
// processes of herald share the token (internal/cluster): the global
// limit (globalShare) and each invalid-request budget divided by
// processes; rank is this process's place among them (0 to
// processes-1). Buckets are shared through a Coordinator instead.
func (e *Engine) Share(processes, rank int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.processes, e.rank = max(processes, 1), rank
	e.invalid.share(e.cfg, e.processes)
	// A larger share frees slots now.
	e.dispatch(e.clock.Now(), nil)
}
