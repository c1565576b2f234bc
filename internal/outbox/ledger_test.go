package outbox_test

import (
	"testing"

	"github.com/riverqueue/river"

	"github.com/herald-bot/herald/internal/outbox"
	"github.com/herald-bot/herald/internal/store/storetest"
	"github.com/herald-bot/herald/internal/work"
	"github.com/herald-bot/herald/internal/work/worktest"
)

func TestKeyFormat(t *testing.T) {
	t.Parallel()
	k := outbox.Key{Event: "1234567890", RouteVersion: 2, Intent: outbox.IntentEvent}
	if k.String() != "1234567890:2:event" {
		t.Errorf("key = %q", k)
	}
}

// The first Insert of a key writes its ledger row and one outbox row
// with its jobs — no River job yet; the same key again — a replayed
// interaction — writes nothing and reports it; a rolled-back transaction
// leaves neither row.
func TestBatchInsertIsIdempotent(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool := storetest.Pool(t)
	key := outbox.Key{Event: "42", RouteVersion: 1, Intent: outbox.IntentEvent}
	job := river.InsertManyParams{Args: worktest.CountArgs{N: 1}, InsertOpts: &river.InsertOpts{Queue: string(work.Events)}}
	enqueue := func(key outbox.Key, commit bool) (int64, bool) {
		tx, err := pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(ctx)
		b, err := outbox.NewBatch(outbox.Entry{Key: key, Token: "tok"}, job, job)
		if err != nil {
			t.Fatal(err)
		}
		id, inserted, err := b.Insert(ctx, tx)
		if err != nil {
			t.Fatal(err)
		}
		if commit {
			if err := tx.Commit(ctx); err != nil {
				t.Fatal(err)
			}
		}
		return id, inserted
	}
	id, inserted := enqueue(key, true)
	if !inserted || id == 0 {
		t.Fatalf("first enqueue: id %d inserted %v", id, inserted)
	}
	if again, inserted := enqueue(key, true); inserted || again != 0 {
		t.Fatalf("replay: id %d inserted %v", again, inserted)
	}
	enqueue(outbox.Key{Event: "43", RouteVersion: 1, Intent: outbox.IntentEvent}, false)
	counts := map[string]int{}
	for _, q := range []string{"interaction_ledger", "interaction_outbox", "river_job"} {
		var n int
		if err := pool.QueryRow(ctx, "SELECT count(*) FROM "+q).Scan(&n); err != nil {
			t.Fatal(err)
		}
		counts[q] = n
	}
	if counts["interaction_ledger"] != 1 || counts["interaction_outbox"] != 1 || counts["river_job"] != 0 {
		t.Errorf("rows = %v; want one ledger and one outbox row, no River job before dispatch", counts)
	}
	var jobs int
	pool.QueryRow(ctx, `SELECT jsonb_array_length(jobs) FROM interaction_outbox WHERE id = $1`, id).Scan(&jobs)
	if jobs != 2 {
		t.Errorf("outbox row holds %d jobs, want 2", jobs)
	}
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	for event, want := range map[string]bool{"42": true, "43": false} {
		if got, err := outbox.Recorded(ctx, tx, event); err != nil || got != want {
			t.Errorf("Recorded(%s) = %v, %v; want %v", event, got, err, want)
		}
	}
}

// Unique jobs cannot go through the outbox: the ledger makes the work
// unique, and River would skip a duplicate silently.
func TestBatchRefusesUniqueJobs(t *testing.T) {
	t.Parallel()
	_, err := outbox.NewBatch(outbox.Entry{Key: outbox.Key{Event: "1", RouteVersion: 1, Intent: outbox.IntentEvent}},
		river.InsertManyParams{Args: worktest.CountArgs{}, InsertOpts: &river.InsertOpts{UniqueOpts: river.UniqueOpts{ByArgs: true}}})
	if err == nil {
		t.Error("a unique job was enqueued")
	}
}

// Settle decides an unknown outcome for good: work already recorded has
// landed; otherwise the key is fenced off, so the write, arriving late,
// lands nothing, and asking again gives the same answer.
func TestSettleFencesWorkThatHasNotLanded(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool := storetest.Pool(t)
	job := river.InsertManyParams{Args: worktest.CountArgs{N: 1}, InsertOpts: &river.InsertOpts{Queue: string(work.Events)}}
	batch := func(event string) outbox.Batch {
		b, err := outbox.NewBatch(outbox.Entry{Key: outbox.Key{Event: event, RouteVersion: 1, Intent: outbox.IntentEvent}}, job)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	landedBatch, lateBatch := batch("landed"), batch("late")
	if _, inserted, err := landedBatch.Insert(ctx, pool); err != nil || !inserted {
		t.Fatalf("insert = %v, %v", inserted, err)
	}
	if landed, err := outbox.Settle(ctx, pool, landedBatch.Key()); err != nil || !landed {
		t.Errorf("recorded work: landed = %v, %v", landed, err)
	}
	for range 2 {
		if landed, err := outbox.Settle(ctx, pool, lateBatch.Key()); err != nil || landed {
			t.Errorf("unrecorded work: landed = %v, %v", landed, err)
		}
	}
	if _, inserted, err := lateBatch.Insert(ctx, pool); err != nil || inserted {
		t.Errorf("the late write after the fence: inserted = %v, %v", inserted, err)
	}
	var outbox int
	pool.QueryRow(ctx, `SELECT count(*) FROM interaction_outbox WHERE interaction_id = 'late'`).Scan(&outbox)
	if outbox != 0 {
		t.Errorf("the late write left %d outbox rows", outbox)
	}
}
