// Package worktest builds River clients on herald's runtime for tests:
// small lanes, a quick shutdown, no logs.
package worktest

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertest"

	"github.com/herald-bot/herald/internal/work"
)

// Lanes are small enough that a test sees a lane fill.
var Lanes = work.LaneWorkers{Interactive: 2, Events: 2, Sync: 4, Background: 1}

// Client is a client on pool working the kinds register adds; the caller
// starts it when the test is ready.
func Client(t testing.TB, pool *pgxpool.Pool, register func(*work.Registry)) *work.Client {
	t.Helper()
	reg := work.NewRegistry()
	register(reg)
	c, err := work.NewClient(pool, work.Options{Registry: reg, Lanes: Lanes, ShutdownTimeout: time.Second, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Started is Client, started, and stopped when the test ends.
func Started(t testing.TB, pool *pgxpool.Pool, register func(*work.Registry)) *work.Client {
	t.Helper()
	c := Client(t, pool, register)
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = work.Stop(c, time.Second, time.Second) })
	return c
}

// CountArgs is a job that does nothing but tell a Counter it ran.
type CountArgs struct{ N int }

func (CountArgs) Kind() string { return "test_count" }

// Counter works CountArgs jobs, sending each job's id on Runs.
type Counter struct {
	river.WorkerDefaults[CountArgs]
	Runs chan int64
}

// NewCounter is a Counter with room for n runs before a test reads them.
func NewCounter(n int) *Counter { return &Counter{Runs: make(chan int64, n)} }

func (w *Counter) Work(_ context.Context, j *river.Job[CountArgs]) error {
	w.Runs <- j.ID
	return nil
}

// Work works one job of args with w as herald's client would — its
// middleware (outcomes, lane budgets and priorities) and River's context
// (river.ClientFromContext) — inside a transaction on pool that it
// commits once the attempt is recorded, in the spirit of rivertest. It
// returns River's account: the job row after the attempt and what came
// of it (completed, snoozed, retryable, cancelled). The jobs w inserted
// are then in the database (rivertest.RequireInserted), and the Discord
// calls it made in the simulator's record.
func Work[T river.JobArgs](t testing.TB, pool *pgxpool.Pool, w river.Worker[T], args T, opts *river.InsertOpts) *rivertest.WorkResult {
	t.Helper()
	tw := rivertest.NewWorker(t, riverpgxv5.New(pool), work.Config(pool, work.Options{Logger: slog.New(slog.DiscardHandler)}), w)
	tx, err := pool.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.WithoutCancel(t.Context()))
	res, err := tw.Work(t.Context(), t, tx, args, opts)
	if err != nil {
		t.Fatalf("worktest: %s: %v", args.Kind(), err)
	}
	if err := tx.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	return res
}
