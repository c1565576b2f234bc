package webhookproxy

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// pipeTx is the accepting transaction: its BEGIN goes at the head of its
// first batch instead of in a round trip of its own, as pgx's Begin
// sends it. At full rate a round trip costs as much as a group's reads
// (both about 0.8 ms on 2 cores), so a group commits in two round trips
// instead of three. It is a pgx.Tx because River's InsertManyTx writes
// the drain jobs in it; the connection must be idle (no transaction
// open) when it is made.
type pipeTx struct {
	conn  *pgx.Conn
	begun bool
}

func newPipeTx(conn *pgx.Conn) *pipeTx { return &pipeTx{conn: conn} }

// errNested: the accepting transaction needs no savepoints.
var errNested = errors.New("webhookproxy: no nested transactions in the accepting transaction")

// SendBatch sends b, with BEGIN ahead of it if nothing was sent yet.
func (t *pipeTx) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	if !t.begun {
		t.begun = true
		b.QueuedQueries = append([]*pgx.QueuedQuery{{SQL: "BEGIN"}}, b.QueuedQueries...)
	}
	return t.conn.SendBatch(ctx, b)
}

// begin sends BEGIN alone for a first statement that is not a batch.
func (t *pipeTx) begin(ctx context.Context) error {
	if t.begun {
		return nil
	}
	t.begun = true
	_, err := t.conn.Exec(ctx, "BEGIN")
	return err
}

func (t *pipeTx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if err := t.begin(ctx); err != nil {
		return pgconn.CommandTag{}, err
	}
	return t.conn.Exec(ctx, sql, args...)
}

func (t *pipeTx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if err := t.begin(ctx); err != nil {
		return nil, err
	}
	return t.conn.Query(ctx, sql, args...)
}

func (t *pipeTx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	if err := t.begin(ctx); err != nil {
		return errRow{err}
	}
	return t.conn.QueryRow(ctx, sql, args...)
}

func (t *pipeTx) CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, src pgx.CopyFromSource) (int64, error) {
	if err := t.begin(ctx); err != nil {
		return 0, err
	}
	return t.conn.CopyFrom(ctx, table, columns, src)
}

func (t *pipeTx) Prepare(ctx context.Context, name, sql string) (*pgconn.StatementDescription, error) {
	return t.conn.Prepare(ctx, name, sql)
}

// Commit commits what was sent; a transaction that sent nothing has
// nothing to commit.
func (t *pipeTx) Commit(ctx context.Context) error {
	if !t.begun {
		return nil
	}
	_, err := t.conn.Exec(ctx, "COMMIT")
	return err
}

// Rollback ends the transaction. A connection it fails on is left inside
// a transaction, and pgxpool closes such a connection on release.
func (t *pipeTx) Rollback(ctx context.Context) error {
	if !t.begun {
		return nil
	}
	_, err := t.conn.Exec(ctx, "ROLLBACK")
	return err
}

func (t *pipeTx) Begin(context.Context) (pgx.Tx, error) { return nil, errNested }

// LargeObjects is not offered: nothing in the accepting transaction
// uses large objects, and the zero value is unusable.
func (t *pipeTx) LargeObjects() pgx.LargeObjects { return pgx.LargeObjects{} }

func (t *pipeTx) Conn() *pgx.Conn { return t.conn }

// errRow is a pgx.Row whose Scan reports err.
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }
