package bench

import (
	"context"
	"log/slog"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/herald-bot/herald/internal/store"
)

// bodyArgs is a job carrying a notification's body, as a proxy built on
// bare River would store it.
type bodyArgs struct {
	Body string `json:"body"`
}

func (bodyArgs) Kind() string { return "bench_body" }

// bareBatchSize is the rows of one InsertMany: River's own batch insert at
// the size herald's proxy groups reach at most.
const bareBatchSize = 200

// bareBatchInserts is the baseline of the acceptance phase: bare River's
// batch insert, writers goroutines each inserting bareBatchSize jobs
// carrying body per transaction (River's InsertMany, one COMMIT each) for
// d, on a pool of their own. It returns the rows committed per second.
func bareBatchInserts(ctx context.Context, dbURL, body string, writers int, d time.Duration) (float64, error) {
	if err := emptyTables(ctx, dbURL); err != nil {
		return 0, err
	}
	pool, err := store.Open(ctx, dbURL, store.Pool{Name: "bench-bare-batch", Max: int32(writers)})
	if err != nil {
		return 0, err
	}
	defer pool.Close()
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return 0, err
	}
	params := make([]river.InsertManyParams, bareBatchSize)
	for i := range params {
		params[i] = river.InsertManyParams{Args: bodyArgs{Body: body}}
	}
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	start := time.Now()
	done := make(chan int, writers)
	errs := make(chan error, writers)
	for range writers {
		go func() {
			n := 0
			for ctx.Err() == nil {
				if _, err := client.InsertMany(ctx, params); err != nil {
					if ctx.Err() == nil {
						errs <- err
					}
					break
				}
				n += len(params)
			}
			done <- n
		}()
	}
	rows := 0
	for range writers {
		rows += <-done
	}
	select {
	case err := <-errs:
		return 0, err
	default:
	}
	return float64(rows) / time.Since(start).Seconds(), emptyTables(context.WithoutCancel(ctx), dbURL)
}
