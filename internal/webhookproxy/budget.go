package webhookproxy

import (
	"fmt"
	"sync"
	"time"
)

// budgetWindow is Discord's: at most 10,000 invalid requests (401, 403,
// 429) per IP in 10 minutes, or Cloudflare blocks it for everything.
const budgetWindow = 10 * time.Minute

// budget is the proxy's own share of invalid requests: what a caller's
// bad tokens may cost at Discord, per caller and for all callers, each
// far inside the REST engine's webhook budget, which is itself apart
// from the bot's. A caller past its share is refused before Discord
// sees anything, and honest callers keep theirs.
type budget struct {
	perCaller, total int
	now              func() time.Time

	mu    sync.Mutex
	spent map[string][]time.Time // per caller, oldest first
	all   []time.Time
}

func newBudget(perCaller, total int, now func() time.Time) *budget {
	return &budget{perCaller: perCaller, total: total, now: now, spent: map[string][]time.Time{}}
}

// overBudget refuses a caller until the window frees a unit.
type overBudget struct{ retryAfter time.Duration }

func (e *overBudget) Error() string {
	return fmt.Sprintf("webhookproxy: invalid-request budget spent; retry in %s", e.retryAfter.Round(time.Second))
}

// allow reports whether caller may cost one more invalid request.
func (b *budget) allow(caller string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	cutoff := now.Add(-budgetWindow)
	b.all = expire(b.all, cutoff)
	mine := expire(b.spent[caller], cutoff)
	if len(mine) == 0 {
		delete(b.spent, caller)
	} else {
		b.spent[caller] = mine
	}
	switch {
	case len(mine) >= b.perCaller:
		return &overBudget{retryAfter: mine[0].Sub(cutoff)}
	case len(b.all) >= b.total:
		return &overBudget{retryAfter: b.all[0].Sub(cutoff)}
	}
	return nil
}

// spend records one invalid request of caller's.
func (b *budget) spend(caller string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	b.spent[caller] = append(b.spent[caller], now)
	b.all = append(b.all, now)
}

// used is what was spent in the window, for /herald proxy and metrics.
func (b *budget) used() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.all = expire(b.all, b.now().Add(-budgetWindow))
	return len(b.all)
}

// expire drops the times before cutoff; ts is oldest first.
func expire(ts []time.Time, cutoff time.Time) []time.Time {
	i := 0
	for i < len(ts) && !ts[i].After(cutoff) {
		i++
	}
	return ts[i:]
}
