package work_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/herald-bot/herald/internal/discord/transport"
	"github.com/herald-bot/herald/internal/store/storetest"
	"github.com/herald-bot/herald/internal/testsupport/wait"
	"github.com/herald-bot/herald/internal/work"
	"github.com/herald-bot/herald/internal/work/worktest"
)

type ticketArgs struct {
	work.Ordered
	Text string
	Fail bool
}

func (ticketArgs) Kind() string { return "test_ticket_event" }

type ticketWorker struct {
	river.WorkerDefaults[ticketArgs]
	mu  sync.Mutex
	ran []string
}

func (w *ticketWorker) Work(_ context.Context, j *river.Job[ticketArgs]) error {
	w.mu.Lock()
	w.ran = append(w.ran, j.Args.Text)
	w.mu.Unlock()
	if j.Args.Fail {
		return &transport.APIError{Route: "POST /channels/{channel_id}/messages", Status: 404, Code: 10003, Message: "Unknown Channel"}
	}
	return nil
}

// Ordered events of one target run in the order they were enqueued even
// when River would start them the other way round, and one that fails for
// good lets the next one go.
func TestOrderedEventsRunInOrder(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t)
	w := &ticketWorker{}
	c := worktest.Client(t, pool, func(r *work.Registry) { work.Register(r, w) })
	ctx := t.Context()
	texts := []string{"opened", "claimed", "closed"}
	var params []river.InsertManyParams
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i, text := range texts {
		ord, err := work.NextInOrder(ctx, tx, "ticket:9")
		if err != nil {
			t.Fatal(err)
		}
		// River would run the later events first: they are scheduled earlier.
		params = append(params, river.InsertManyParams{Args: ticketArgs{Ordered: ord, Text: text, Fail: text == "claimed"},
			InsertOpts: &river.InsertOpts{Queue: string(work.Events), ScheduledAt: time.Now().Add(-time.Duration(i) * time.Second)}})
	}
	if _, err := c.InsertManyTx(ctx, tx, params); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer work.Stop(c, time.Second, time.Second)
	wait.Until(t, "all three", func() bool {
		var done int64
		pool.QueryRow(ctx, `SELECT done_seq FROM event_order WHERE target = 'ticket:9'`).Scan(&done)
		return done == 3
	})
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.ran) != 3 || w.ran[0] != "opened" || w.ran[1] != "claimed" || w.ran[2] != "closed" {
		t.Errorf("ran %v, want opened, claimed, closed", w.ran)
	}
}
