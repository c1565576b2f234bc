package outbox_test

import (
	"testing"
	"time"

	"github.com/herald-bot/herald/internal/outbox"
	"github.com/herald-bot/herald/internal/store/storetest"
	"github.com/herald-bot/herald/internal/testsupport/wait"
	"github.com/herald-bot/herald/internal/work"
	"github.com/herald-bot/herald/internal/work/worktest"
)

// A working client prunes ledger rows older than a day and message
// budgets older than an hour when it starts, forgets tokens Discord no
// longer accepts, and keeps the rest.
func TestPruneOnStart(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t)
	ctx := t.Context()
	for _, q := range []string{
		`INSERT INTO interaction_ledger (idempotency_key, event_id, created_at, token) VALUES ('old:1:event', 'old', now() - interval '2 days', 'a'),
			('expired:1:event', 'expired', now() - interval '16 minutes', 'b'), ('new:1:event', 'new', now(), 'c')`,
		`INSERT INTO interaction_messages (interaction_id, created_at) VALUES ('old', now() - interval '2 hours'), ('new', now())`,
	} {
		if _, err := pool.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	c := worktest.Started(t, pool, func(r *work.Registry) { outbox.Housekeeping(r, pool) })
	defer work.Stop(c, time.Second, time.Second)
	wait.Until(t, "pruned", func() bool {
		var ledger, messages int
		pool.QueryRow(ctx, `SELECT count(*) FROM interaction_ledger`).Scan(&ledger)
		pool.QueryRow(ctx, `SELECT count(*) FROM interaction_messages`).Scan(&messages)
		return ledger == 2 && messages == 1
	})
	if _, err := outbox.Token(ctx, pool, "expired", work.TokenLife); err != outbox.ErrTokenExpired {
		t.Errorf("expired token: %v", err)
	}
	if token, err := outbox.Token(ctx, pool, "new", work.TokenLife); err != nil || token != "c" {
		t.Errorf("live token = %q, %v", token, err)
	}
	var left int
	pool.QueryRow(ctx, `SELECT count(*) FROM interaction_ledger WHERE token IS NOT NULL`).Scan(&left)
	if left != 1 {
		t.Errorf("%d tokens kept, want only the live one", left)
	}
}
