package transport

import (
	"net/http"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/herald-bot/herald/internal/testsupport/wait"
)

// Loans move slots between processes without the processes together ever
// exceeding the limit in a period Discord may draw — each counted at its
// largest share within that period, since what a process sent with a
// slot counts there after it gave the slot up — however late a borrower
// hears of a loan or its extensions, or not at all. The loans follow the
// cluster's rules: extended before they end, a loan to other borrowers
// starting where the one before ends.
func TestLoansKeepWithinTheLimit(t *testing.T) {
	t.Parallel()
	const limit, processes, period = 5, 3, time.Second
	start := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	clk := clockwork.NewFakeClockAt(start)
	engines := make([]*Engine, processes)
	for rank := range engines {
		engines[rank] = New(Config{GlobalLimit: limit, GlobalPeriod: period, Clock: clk})
		engines[rank].Share(processes, rank)
	}
	at := func(s float64) time.Time { return start.Add(time.Duration(s * float64(time.Second))) }
	type event struct {
		at time.Time
		do func()
	}
	var events []event
	// lend has lender lend slots from from, extended every second by two
	// seconds until stop; borrow delivers the loan to borrower late, or
	// not at all for the extensions in lost.
	loanTo := func(lender, borrower, slots int, from, stop, late float64, lost ...float64) {
		for s := from; s <= stop; s++ {
			until := at(s + 2)
			events = append(events, event{at(s), func() { engines[lender].Lend(slots, until) }})
			dropped := false
			for _, l := range lost {
				dropped = dropped || l == s
			}
			if !dropped {
				name := string(rune('a' + lender))
				events = append(events, event{at(s + late), func() { engines[borrower].Borrow(name, slots, at(from), until) }})
			}
		}
	}
	loanTo(0, 1, 1, 1, 6, 0.3, 3)
	// Rank 2 lends to rank 1, then to rank 0 from where that loan ends.
	loanTo(2, 1, 1, 2, 4, 0, 4)
	loanTo(2, 0, 1, 6, 9, 1.5)

	step := period / 20
	var history [][processes]int
	var used [processes]int
	for now := start; now.Before(at(14)); now = now.Add(step) {
		clk.Advance(now.Sub(clk.Now()))
		for _, ev := range events {
			if !ev.at.After(now) && ev.do != nil {
				ev.do()
			}
		}
		for i := range events {
			if !events[i].at.After(now) {
				events[i].do = nil
			}
		}
		var shares [processes]int
		for rank, e := range engines {
			e.mu.Lock()
			shares[rank] = e.globalShare(now)
			e.mu.Unlock()
			used[rank] += shares[rank]
		}
		history = append(history, shares)
		window := 0
		for rank := range engines {
			most := 0
			for back := 0; back <= int(period/step) && back < len(history); back++ {
				most = max(most, history[len(history)-1-back][rank])
			}
			window += most
		}
		if window > limit {
			t.Fatalf("%d may be sent in the period before %s (shares now %v)", window, now.Sub(start), shares)
		}
	}
	// Without loans each has 5/3 a period on average, less what its turns
	// cost (TestSharesTakeTurns); rank 1 borrowed for most of 8 seconds.
	if avg := float64(used[1]) / float64(len(history)); avg < 2.1 {
		t.Errorf("rank 1, the borrower, had %.2f a period on average (%v in %d steps), want more than its share", avg, used, len(history))
	}
}

// A process lends only when it had nothing to send for lendAfter periods,
// and then its even share less the quarter it keeps; one with requests
// waiting for a global slot is short and lends nothing.
func TestLendableOnlyWhenIdle(t *testing.T) {
	t.Parallel()
	d := newDiscord(t, func(r *http.Request, n int) reply { return limited("edits", 50, 49, "5") })
	const period = 10 * time.Second
	e := d.engine(Config{GlobalLimit: 12, GlobalPeriod: period})
	if n := e.Lendable(); n != 0 {
		t.Fatalf("one process lends %d", n)
	}
	e.Share(3, 0) // 4 a period, 1 kept
	if n := e.Lendable(); n != 3 {
		t.Fatalf("a process that never sent lends %d, want 3", n)
	}
	finished(t, d.send(t.Context(), e, "PATCH", "/channels/1/messages/0"))
	if n := e.Lendable(); n != 0 {
		t.Fatalf("just after a request: lends %d", n)
	}
	// Lending 3 of 4 leaves 1 a period: in the next period, one of two
	// requests waits for a global slot, and the process is short.
	d.clk.Advance(period)
	e.Lend(3, d.clk.Now().Add(time.Second))
	a := d.send(t.Context(), e, "PATCH", "/channels/1/messages/0")
	b := d.send(t.Context(), e, "PATCH", "/channels/1/messages/0")
	var other <-chan call
	select { // either may go first
	case <-a:
		other = b
	case <-b:
		other = a
	case <-time.After(5 * time.Second):
		t.Fatal("neither request went")
	}
	wait.Until(t, "the other request short of a slot", func() bool { return e.Short() == 1 })
	if n := e.Lendable(); n != 0 {
		t.Fatalf("short of a slot: lends %d", n)
	}
	d.clk.Advance(period)
	finished(t, other)
	if n := e.Short(); n != 0 {
		t.Fatalf("%d short with nothing queued", n)
	}
	d.clk.Advance(lendAfter*period - time.Nanosecond)
	if n := e.Lendable(); n != 0 {
		t.Fatalf("idle for less than %d periods: lends %d", lendAfter, n)
	}
	d.clk.Advance(time.Nanosecond)
	if n := e.Lendable(); n != 3 {
		t.Fatalf("idle for %d periods: lends %d, want 3", lendAfter, n)
	}
}
