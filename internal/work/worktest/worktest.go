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
