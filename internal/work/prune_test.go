package work_test

import (
	"testing"
	"time"

	"github.com/herald-bot/herald/internal/store/storetest"
	"github.com/herald-bot/herald/internal/testsupport/wait"
	"github.com/herald-bot/herald/internal/work"
)

// A working client prunes ledger rows older than a day and message
// budgets older than an hour when it starts, and keeps the rest.
func TestPruneOnStart(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t)
	ctx := t.Context()
	for _, q := range []string{
		`INSERT INTO interaction_ledger (idempotency_key, event_id, created_at) VALUES ('old:1:event', 'old', now() - interval '2 days'), ('new:1:event', 'new', now())`,
		`INSERT INTO interaction_messages (interaction_id, created_at) VALUES ('old', now() - interval '2 hours'), ('new', now())`,
	} {
		if _, err := pool.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	c := startedClient(t, pool, func(r *work.Registry) { work.Register(r, &blockWorker{}) })
	defer work.Stop(c, time.Second, time.Second)
	wait.Until(t, "pruned", func() bool {
		var ledger, messages int
		pool.QueryRow(ctx, `SELECT count(*) FROM interaction_ledger`).Scan(&ledger)
		pool.QueryRow(ctx, `SELECT count(*) FROM interaction_messages`).Scan(&messages)
		return ledger == 1 && messages == 1
	})
	var kept string
	pool.QueryRow(ctx, `SELECT event_id FROM interaction_ledger`).Scan(&kept)
	if kept != "new" {
		t.Errorf("kept ledger row %q, want the new one", kept)
	}
}
