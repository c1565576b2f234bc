package cluster

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// GlobalShare is this process's share of the bot's global limit as loans
// move it (transport.Engine): a process short of global slots asks, and
// the idle ones lend it part of their shares for a while.
type GlobalShare interface {
	// Short is how many requests wait for a global slot.
	Short() int
	// Lendable is how many slots a period may be lent now (0: none).
	Lendable() int
	// Lend stops using slots until a settle after until.
	Lend(slots int, until time.Time)
	// Borrow adds slots lent by lender, usable from a settle after from
	// until until.
	Borrow(lender string, slots int, from, until time.Time)
}

// Loans travel as notifications on one channel, no table: a loan is safe
// without them arriving (the lender stops using the slots before it says
// so, and a borrower that misses an extension stops at the end it knows),
// so a lost one only wastes slots. Payloads:
//
//	ask <process> <requests waiting for a global slot>
//	loan <lender> <from> <until> <slots> <borrower>,<borrower>…
//
// with times in Unix nanoseconds of the lender's clock. Each borrower's
// part is the slots divided among them in the order named, the first
// ones taking the remainder; the parts stay fixed for the loan's life,
// and a loan to other borrowers starts only when the one before ends, so
// no two borrowers ever use the same slot. A loan goes to those with the
// most requests waiting, and stays with them while they keep asking:
// changing borrowers costs the time to the old loan's end.
const loansChannel = "herald_global_loans"

// asker is a process short of global slots, as its last ask said.
type asker struct {
	at      time.Time
	waiting int
}

// given is the loan this process gives or last gave.
type given struct {
	from, until time.Time
	slots       int
	to          []string
	stopped     bool // not extended any more
}

// loans asks for slots when the engine is short and lends them to those
// who asked when it is idle; it runs at every turn of the loop.
func (b *Buckets) loans(ctx context.Context) {
	s := b.o.Share
	if s == nil {
		return
	}
	now := time.Now()
	g := b.given
	if n := s.Short(); n > 0 {
		if g != nil {
			g.stopped = true
		}
		if now.Sub(b.asked) >= b.o.LoanTerm/2 {
			b.asked = now
			b.notifyLoans(ctx, fmt.Sprintf("ask %s %d", b.c.id, n))
		}
		return
	}
	slots := s.Lendable()
	var to []string
	if g != nil && !g.stopped && g.until.After(now) {
		to = g.to
	}
	to = b.borrowers(now, slots, to)
	if slots == 0 || len(to) == 0 {
		if g != nil {
			g.stopped = true
		}
		return
	}
	switch {
	// Extended only while it runs: after its end the slots were this
	// process's again, and a borrower must wait a settle once more.
	case g != nil && !g.stopped && g.until.After(now) && g.slots == slots && slices.Equal(g.to, to):
		if g.until.Sub(now) > b.o.LoanTerm/2 {
			return
		}
		g.until = now.Add(b.o.LoanTerm)
	default:
		// The loan before keeps its borrowers to its end.
		from := now
		if g != nil && g.until.After(now) {
			from = g.until
		}
		g = &given{from: from, until: from.Add(b.o.LoanTerm), slots: slots, to: to}
		b.given = g
	}
	s.Lend(slots, g.until)
	b.notifyLoans(ctx, fmt.Sprintf("loan %s %d %d %d %s", b.c.id, g.from.UnixNano(), g.until.UnixNano(), slots, strings.Join(to, ",")))
}

// borrowers are the processes that asked within a loan's term and are
// not lending themselves, at most one for each slot: those of the loan
// running (current) while every one of them still asks, else those with
// the most requests waiting.
func (b *Buckets) borrowers(now time.Time, slots int, current []string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var to []string
	for p, a := range b.askers {
		switch {
		case now.Sub(a.at) > b.o.LoanTerm:
			delete(b.askers, p)
		case p != b.c.id && !b.lenders[p].After(now):
			to = append(to, p)
		}
	}
	if len(current) > 0 && len(current) <= slots && !slices.ContainsFunc(current, func(p string) bool { return !slices.Contains(to, p) }) {
		return current
	}
	slices.SortFunc(to, func(p, q string) int {
		if c := cmp.Compare(b.askers[q].waiting, b.askers[p].waiting); c != 0 {
			return c
		}
		return strings.Compare(p, q)
	})
	return to[:min(len(to), slots)]
}

func (b *Buckets) notifyLoans(ctx context.Context, payload string) {
	b.stats.queries.Add(1)
	if _, err := b.c.o.DB.Exec(ctx, `SELECT pg_notify('`+loansChannel+`', $1)`, payload); err != nil && ctx.Err() == nil {
		b.c.o.Logger.WarnContext(ctx, "cluster: could not ask for or lend global slots", "err", err)
	}
}

// heardLoans takes an ask or a loan another process announced.
func (b *Buckets) heardLoans(payload string) {
	f := strings.Fields(payload)
	switch {
	case len(f) == 3 && f[0] == "ask":
		waiting, err := strconv.Atoi(f[2])
		if err != nil {
			return
		}
		b.mu.Lock()
		b.askers[f[1]] = asker{at: time.Now(), waiting: waiting}
		b.mu.Unlock()
	case len(f) == 6 && f[0] == "loan":
		from, err1 := strconv.ParseInt(f[2], 10, 64)
		until, err2 := strconv.ParseInt(f[3], 10, 64)
		slots, err3 := strconv.Atoi(f[4])
		if err1 != nil || err2 != nil || err3 != nil {
			return
		}
		lender, end := f[1], time.Unix(0, until)
		b.mu.Lock()
		b.lenders[lender] = end
		b.mu.Unlock()
		to := strings.Split(f[5], ",")
		if i := slices.Index(to, b.c.id); i >= 0 && lender != b.c.id {
			part := slots / len(to)
			if i < slots%len(to) {
				part++
			}
			b.o.Share.Borrow(lender, part, time.Unix(0, from), end)
		}
	}
}
