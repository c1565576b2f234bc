package cluster

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/herald-bot/herald/internal/store/storetest"
	"github.com/herald-bot/herald/internal/testsupport/wait"
)

// share is a GlobalShare that records what the loans did to it.
type share struct {
	mu       sync.Mutex
	short    int
	lendable int
	lent     []time.Time // each Lend's until
	borrowed []borrowed
}

type borrowed struct {
	lender      string
	slots       int
	from, until time.Time
}

func (s *share) Short() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.short
}

func (s *share) Lendable() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lendable
}

func (s *share) Lend(slots int, until time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lent = append(s.lent, until)
}

func (s *share) Borrow(lender string, slots int, from, until time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.borrowed = append(s.borrowed, borrowed{lender, slots, from, until})
}

func (s *share) set(short, lendable int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.short, s.lendable = short, lendable
}

func (s *share) loans() ([]time.Time, []borrowed) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.lent...), append([]borrowed(nil), s.borrowed...)
}

// A loan's slots are divided among the borrowers it names, the first
// taking the remainder; a process that is not named borrows nothing; a
// malformed notification changes nothing.
func TestLoanPartsAndBorrowers(t *testing.T) {
	t.Parallel()
	parts := map[string]int{}
	for _, id := range []string{"a", "b", "c", "d"} {
		s := &share{}
		b := (&Cluster{id: id}).Buckets(BucketOptions{Share: s})
		b.heardLoans("loan x 100 2000000000 5 a,b,c")
		b.heardLoans("loan x 100 nope 5 a,b,c")
		b.heardLoans("loan x 100 2000000000 5")
		if _, got := s.loans(); len(got) == 1 {
			if got[0].lender != "x" || !got[0].from.Equal(time.Unix(0, 100)) || !got[0].until.Equal(time.Unix(0, 2000000000)) {
				t.Errorf("%s borrowed %+v", id, got[0])
			}
			parts[id] = got[0].slots
		} else if len(got) > 1 {
			t.Errorf("%s borrowed %d times from one loan and two bad ones", id, len(got))
		}
		if id == "a" {
			// Who asked, less who lends, one for each slot at most, those
			// with more requests waiting first; the current borrowers
			// while they all still ask.
			now := time.Now()
			for _, ask := range []string{"q 1", "r 5", "s 3", "a 9"} {
				b.heardLoans("ask " + ask)
			}
			b.heardLoans("ask q")
			b.heardLoans("loan r 100 " + strconv.FormatInt(now.Add(time.Minute).UnixNano(), 10) + " 1 q")
			for _, c := range []struct {
				slots   int
				current []string
				want    string
			}{{5, nil, "s q"}, {1, nil, "s"}, {1, []string{"q"}, "q"}, {2, []string{"q", "x"}, "s q"}, {1, []string{"q", "s"}, "s"}} {
				if got := strings.Join(b.borrowers(now, c.slots, c.current), " "); got != c.want {
					t.Errorf("%d slots, lending to %v: borrowers %q, want %q (a is this process, r lends)", c.slots, c.current, got, c.want)
				}
			}
			if got := b.borrowers(now.Add(2*b.o.LoanTerm), 5, nil); len(got) != 0 {
				t.Errorf("asks older than a loan's term: borrowers %v", got)
			}
		}
	}
	if parts["a"] != 2 || parts["b"] != 2 || parts["c"] != 1 || parts["d"] != 0 {
		t.Errorf("5 slots over a, b, c: parts %v, want 2, 2, 1 and none for d", parts)
	}
}

// A short process asks, an idle one lends to it through Postgres's
// notifications, extends the loan while the borrower keeps asking, and
// lets it end once nobody asks: no extension after the last ask's term.
func TestIdleProcessLendsToShortOne(t *testing.T) {
	t.Parallel()
	db := storetest.Pool(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	// A loan is extended in the second half of its term, from a loop of
	// statements: a term of 2 s leaves a loaded machine's Postgres a
	// second to do it in.
	const term = 2 * time.Second
	start := func(host string, s *share) *Buckets {
		c, err := Join(t.Context(), Options{DB: db, Logger: slog.New(slog.DiscardHandler), Host: host})
		if err != nil {
			t.Fatal(err)
		}
		b := c.Buckets(BucketOptions{Share: s, LoanTerm: term, Poll: 20 * time.Millisecond})
		done := make(chan struct{})
		go func() { b.Run(ctx); close(done) }()
		t.Cleanup(func() { <-done })
		return b
	}
	shortS, idleS := &share{}, &share{}
	shortS.set(4, 0)
	idleS.set(0, 3)
	start("short", shortS)
	idle := start("idle", idleS)
	wait.Until(t, "a loan to the short process, extended", func() bool {
		_, got := shortS.loans()
		return len(got) >= 3
	})
	_, got := shortS.loans()
	for _, l := range got {
		if l.lender != idle.c.id || l.slots != 3 || !l.from.Equal(got[0].from) || l.until.Sub(l.from) < term {
			t.Fatalf("borrowed %+v; want 3 slots from %s, one loan extended (from %s)", l, idle.c.id, got[0].from)
		}
	}
	shortS.set(0, 0)
	stopped := time.Now()
	wait.Until(t, "the loan to end", func() bool {
		lent, _ := idleS.loans()
		return time.Since(stopped) > 3*term && lent[len(lent)-1].Before(time.Now())
	})
	lent, _ := idleS.loans()
	if last := lent[len(lent)-1]; last.After(stopped.Add(3 * term)) {
		t.Errorf("the loan was extended to %s after the last ask at %s", last.Sub(stopped), stopped)
	}
}
