package work_test

import (
	"log/slog"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/herald-bot/herald/internal/store/storetest"
	"github.com/herald-bot/herald/internal/work"
)

// An Inserter refuses until it is bound, then inserts through the client
// it was bound to, within the caller's transaction.
func TestInserterInsertsOnceBound(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t)
	var ins work.Inserter
	insert := func() error {
		return pgx.BeginFunc(t.Context(), pool, func(tx pgx.Tx) error {
			_, err := ins.InsertManyTx(t.Context(), tx, []river.InsertManyParams{{Args: blockArgs{Lane: "events"}, InsertOpts: &river.InsertOpts{Queue: string(work.Events)}}})
			return err
		})
	}
	if err := insert(); err == nil {
		t.Fatal("an unbound inserter inserted")
	}
	c, err := work.NewClient(pool, work.Options{Registry: work.NewRegistry(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ins.Bind(c)
	if err := insert(); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := pool.QueryRow(t.Context(), `SELECT count(*) FROM river_job WHERE kind = 'test_block'`).Scan(&n); err != nil || n != 1 {
		t.Errorf("jobs = %d, %v; want the one inserted while bound", n, err)
	}
}
