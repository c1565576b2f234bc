package work_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/herald-bot/herald/internal/store/storetest"
	"github.com/herald-bot/herald/internal/work"
)

func batch(t *testing.T, event string) work.Batch {
	t.Helper()
	b, err := work.NewBatch(work.Entry{Key: work.Key{Event: event, RouteVersion: 1, Intent: work.IntentEvent}},
		river.InsertManyParams{Args: countArgs{N: 1}, InsertOpts: &river.InsertOpts{Queue: string(work.Interactive)}})
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
	g := work.NewGroupWriter(pool)
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
	g := work.NewGroupWriter(pool)
	short, cancelShort := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancelShort()
	if _, _, err := g.Insert(short, batch(t, "late")); !errors.Is(err, work.ErrNotWritten) {
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
