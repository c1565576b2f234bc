package webhookproxy

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/herald-bot/herald/internal/store/storetest"
)

// opTracer records each operation a connection sends: a query's SQL, or
// a batch's statements joined by "; ".
type opTracer struct {
	mu    sync.Mutex
	ops   []string
	batch []string
}

func (o *opTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.ops = append(o.ops, d.SQL)
	return ctx
}

func (o *opTracer) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (o *opTracer) TraceBatchStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceBatchStartData) context.Context {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.batch = o.batch[:0]
	for _, q := range d.Batch.QueuedQueries {
		o.batch = append(o.batch, q.SQL)
	}
	o.ops = append(o.ops, strings.Join(o.batch, "; "))
	return ctx
}

func (o *opTracer) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (o *opTracer) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}

func (o *opTracer) take() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	ops := o.ops
	o.ops = nil
	return ops
}

// The accepting transaction sends no BEGIN of its own: its first batch
// carries it, so a group that needs no drain job commits in two round
// trips. What it wrote stays unseen until its COMMIT and is gone after a
// ROLLBACK; a transaction that starts with a plain statement begins
// first, and one that sent nothing has nothing to end.
func TestPipeTxBeginsInItsFirstBatch(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	url := storetest.URL(t)
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	tr := &opTracer{}
	cfg.Tracer = tr
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	other, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(context.Background())
	if _, err := conn.Exec(ctx, `CREATE TABLE piped (n int)`); err != nil {
		t.Fatal(err)
	}
	seen := func() (n int) {
		t.Helper()
		if err := other.QueryRow(ctx, `SELECT count(*) FROM piped`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	tr.take()

	for _, commit := range []bool{true, false} {
		tx := newPipeTx(conn)
		b := &pgx.Batch{}
		b.Queue(`INSERT INTO piped VALUES (1)`)
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			t.Fatal(err)
		}
		if s := conn.PgConn().TxStatus(); s != 'T' || seen() != map[bool]int{true: 0, false: 1}[commit] {
			t.Fatalf("after the first batch: transaction status %q, %d rows seen from outside", s, seen())
		}
		end, err := tx.Rollback, error(nil)
		if commit {
			end = tx.Commit
		}
		if err = end(ctx); err != nil || conn.PgConn().TxStatus() != 'I' {
			t.Fatalf("ending the transaction: %v, status %q", err, conn.PgConn().TxStatus())
		}
	}
	if n := seen(); n != 1 {
		t.Errorf("%d rows after a commit and a rollback, want 1", n)
	}
	want := []string{"BEGIN; INSERT INTO piped VALUES (1)", "COMMIT", "BEGIN; INSERT INTO piped VALUES (1)", "ROLLBACK"}
	if ops := tr.take(); !slices.Equal(ops, want) {
		t.Errorf("sent %q, want %q", ops, want)
	}

	tx := newPipeTx(conn)
	if _, err := tx.Exec(ctx, `INSERT INTO piped VALUES ($1)`, 2); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if err := newPipeTx(conn).Commit(ctx); err != nil {
		t.Fatal(err)
	}
	want = []string{"BEGIN", "INSERT INTO piped VALUES ($1)", "ROLLBACK"}
	if ops := tr.take(); !slices.Equal(ops, want) || seen() != 1 {
		t.Errorf("sent %q, want %q; %d rows, want 1", ops, want, seen())
	}
	if _, err := newPipeTx(conn).Begin(ctx); err == nil {
		t.Error("a nested transaction was begun")
	}
}
