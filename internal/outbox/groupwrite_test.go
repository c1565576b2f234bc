package outbox_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/herald-bot/herald/internal/outbox"
	"github.com/herald-bot/herald/internal/store/storetest"
	"github.com/herald-bot/herald/internal/testsupport/wait"
	"github.com/herald-bot/herald/internal/work"
	"github.com/herald-bot/herald/internal/work/worktest"
)

func batch(t *testing.T, event string) outbox.Batch {
	t.Helper()
	b, err := outbox.NewBatch(outbox.Entry{Key: outbox.Key{Event: event, RouteVersion: 1, Intent: outbox.IntentEvent}},
		river.InsertManyParams{Args: worktest.CountArgs{N: 1}, InsertOpts: &river.InsertOpts{Queue: string(work.Interactive)}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Many interactions writing at once are each written once, with their
// own outbox row; two deliveries of one interaction in the same group are
// one write and a replay.
func TestGroupWriter(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t)
	g := outbox.NewGroupWriter(pool)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go g.Run(ctx, 2)

	const n = 200
	type result struct {
		id       int64
		inserted bool
	}
	results := make([]result, n+1)
	var wg sync.WaitGroup
	for i := range n + 1 {
		event := fmt.Sprint(i)
		if i == n {
			event = "0" // the first interaction delivered again
		}
		wg.Go(func() {
			id, inserted, err := g.Insert(t.Context(), batch(t, event))
			if err != nil {
				t.Error(err)
			}
			results[i] = result{id, inserted}
		})
	}
	wg.Wait()
	ids := map[int64]bool{}
	inserted := 0
	for _, r := range results {
		if r.inserted {
			inserted++
			if r.id == 0 || ids[r.id] {
				t.Errorf("outbox id %d given twice or missing", r.id)
			}
			ids[r.id] = true
		}
	}
	var ledger, outbox int
	pool.QueryRow(t.Context(), `SELECT count(*) FROM interaction_ledger`).Scan(&ledger)
	pool.QueryRow(t.Context(), `SELECT count(*) FROM interaction_outbox`).Scan(&outbox)
	if inserted != n || ledger != n || outbox != n {
		t.Errorf("%d inserted, %d ledger rows, %d outbox rows; want %d of each and one replay", inserted, ledger, outbox, n)
	}
}

// A batch given up before any statement took it is certainly not
// written: its caller may answer "busy" truthfully.
func TestGroupWriterAbandoned(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t)
	g := outbox.NewGroupWriter(pool)
	short, cancelShort := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancelShort()
	if _, _, err := g.Insert(short, batch(t, "late")); !errors.Is(err, outbox.ErrNotWritten) {
		t.Fatalf("err = %v, want ErrNotWritten", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go g.Run(ctx, 1)
	if _, inserted, err := g.Insert(t.Context(), batch(t, "next")); err != nil || !inserted {
		t.Fatalf("next = %v, %v", inserted, err)
	}
	var n int
	pool.QueryRow(t.Context(), `SELECT count(*) FROM interaction_ledger WHERE event_id = 'late'`).Scan(&n)
	if n != 0 {
		t.Error("the abandoned batch was written")
	}
}

// A batch a statement carries when the database stops answering returns
// at its caller's deadline, not the statement's, as of unknown outcome:
// the fast path must answer within Discord's window and ask the ledger.
func TestGroupWriterReturnsAtCallersDeadline(t *testing.T) {
	t.Parallel()
	dbURL, proxy := storetest.BehindProxy(t)
	pool, err := pgxpool.New(t.Context(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if err := pool.Ping(t.Context()); err != nil {
		t.Fatal(err)
	}
	g := outbox.NewGroupWriter(pool)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go g.Run(ctx, 1)
	proxy.Hold()
	defer proxy.Release()
	short, cancelShort := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancelShort()
	start := time.Now()
	_, _, err = g.Insert(short, batch(t, "held"))
	if !errors.Is(err, outbox.ErrOutcomeUnknown) {
		t.Fatalf("err = %v, want ErrOutcomeUnknown", err)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("returned after %s, past its caller's 200 ms deadline", took)
	}
}

// While another statement is in flight, a writer gathers the batches that
// come within its window into one statement: one transaction for all.
func TestGroupWriterGathersWhileAStatementIsInFlight(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t)
	g := outbox.NewGroupWriter(pool)
	// The gathering ends at the group's bound here, never by the clock.
	const gathered = 5
	outbox.SetGather(g, gathered, time.Hour)
	// The first statement waits on the lock while the test sends the
	// others one at a time: on a loaded machine, longer than 2 s.
	outbox.SetStatementTimeout(g, wait.Timeout)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go g.Run(ctx, 2)
	// The ledger locked, the first statement stays in flight.
	lock, err := pool.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lock.Exec(t.Context(), `LOCK TABLE interaction_ledger IN EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	insert := func(event string) {
		wg.Go(func() {
			if _, inserted, err := g.Insert(t.Context(), batch(t, event)); err != nil || !inserted {
				t.Errorf("%s: inserted %v, %v", event, inserted, err)
			}
		})
	}
	insert("alone")
	wait.Until(t, "the first statement in flight", func() bool { return outbox.InFlight(g) == 1 })
	// Sent one at a time, each after the queue emptied: a writer that did
	// not gather would write what it found alone and leave the rest to
	// other statements.
	for i := range gathered {
		insert(fmt.Sprint("gathered-", i))
		wait.Until(t, fmt.Sprintf("batch %d taken", i), func() bool { return outbox.Queued(g) == 0 })
	}
	wait.Until(t, "the second statement in flight", func() bool { return outbox.InFlight(g) == 2 })
	if err := lock.Rollback(t.Context()); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	var all, together int
	if err := pool.QueryRow(t.Context(), `SELECT count(DISTINCT xmin::text),
		count(DISTINCT xmin::text) FILTER (WHERE event_id LIKE 'gathered-%') FROM interaction_ledger`).Scan(&all, &together); err != nil {
		t.Fatal(err)
	}
	if all != 2 || together != 1 {
		t.Errorf("%d batches in %d transactions, the %d gathered in %d; want the first alone and the others in one", gathered+1, all, gathered, together)
	}
}

// With no statement in flight a lone batch is written at once: the window
// never delays an interaction at low load.
func TestGroupWriterWritesALoneBatchAtOnce(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t)
	g := outbox.NewGroupWriter(pool)
	outbox.SetGather(g, 100, time.Hour)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go g.Run(ctx, 2)
	for i := range 3 {
		// Far below the window: a batch held for it would miss this.
		short, cancelShort := context.WithTimeout(t.Context(), wait.Timeout)
		_, inserted, err := g.Insert(short, batch(t, fmt.Sprint("lone-", i)))
		cancelShort()
		if err != nil || !inserted {
			t.Fatalf("lone batch %d: inserted %v, %v", i, inserted, err)
		}
	}
}
