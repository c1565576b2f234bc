package synctarget_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/herald-bot/herald/internal/store/storetest"
	"github.com/herald-bot/herald/internal/synctarget"
	"github.com/herald-bot/herald/internal/testsupport/examplet"
	"github.com/herald-bot/herald/internal/work"
)

// boardArgs is a sync kind: the job that brings one board's message to
// its newest saved revision.
type boardArgs struct{ Board int64 }

func (boardArgs) Kind() string     { return "example_board" }
func (a boardArgs) Target() string { return fmt.Sprintf("board:%d", a.Board) }

// An admin saves a board twice before its job runs: the second request
// folds into the first job, which publishes the newest revision once. A
// retry of that job (its process died after publishing) finds the
// revision visible and does nothing.
func Example() {
	examplet.Run("board", func(t testing.TB) {
		pool := storetest.Pool(t)
		ctx := t.Context()
		jobs, err := work.NewClient(pool, work.Options{Registry: work.NewRegistry(), Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		args := boardArgs{Board: 7}
		save := func(revision int64) int64 {
			var id int64
			err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
				// The board's configuration is saved in tx too.
				var folded bool
				var err error
				id, folded, err = synctarget.Request(ctx, tx, jobs, args.Target(), revision, args, &river.InsertOpts{Queue: string(work.Sync)})
				fmt.Printf("saved revision %d, folded into a pending job: %t\n", revision, folded)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			return id
		}
		job := save(1)
		if save(2) != job {
			fmt.Println("a second job was queued")
		}
		publish := func(_ context.Context, revision int64) error {
			fmt.Println("publishing revision", revision)
			return nil
		}
		for range 2 {
			if err := synctarget.Run(ctx, pool, job, args.Target(), publish); err != nil {
				t.Fatal(err)
			}
		}
		states, err := synctarget.Status(ctx, pool, []boardArgs{args}, boardArgs.Target)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Printf("published revision %d, job pending: %t\n", states[0].Published, states[0].Job != nil)
	})
	// Output:
	// saved revision 1, folded into a pending job: false
	// saved revision 2, folded into a pending job: true
	// publishing revision 2
	// published revision 2, job pending: false
}
