package outbox_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/herald-bot/herald/internal/outbox"
	"github.com/herald-bot/herald/internal/store/storetest"
	"github.com/herald-bot/herald/internal/testsupport/wait"
	"github.com/herald-bot/herald/internal/work"
	"github.com/herald-bot/herald/internal/work/worktest"
)

// enqueued commits one interaction's jobs and returns its outbox row.
func enqueued(t *testing.T, pool *pgxpool.Pool, event string, jobs ...river.InsertManyParams) int64 {
	t.Helper()
	tx, err := pool.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	b, err := outbox.NewBatch(outbox.Entry{Key: outbox.Key{Event: event, RouteVersion: 1, Intent: outbox.IntentEvent}}, jobs...)
	if err != nil {
		t.Fatal(err)
	}
	id, _, err := b.Insert(t.Context(), tx)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	return id
}

func jobCount(t *testing.T, pool *pgxpool.Pool) (jobs, outbox int) {
	t.Helper()
	pool.QueryRow(t.Context(), `SELECT count(*) FROM river_job WHERE kind = 'test_count'`).Scan(&jobs)
	pool.QueryRow(t.Context(), `SELECT count(*) FROM interaction_outbox`).Scan(&outbox)
	return jobs, outbox
}

// A released outbox row becomes its River jobs at once, with their
// options and the guild in their metadata, exactly once: releasing it
// again moves nothing. A row never released (its process died before the
// answer) is swept once its hold has passed.
func TestDispatcherMovesEachRowOnce(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t)
	w := worktest.NewCounter(8)
	c := worktest.Started(t, pool, func(r *work.Registry) { work.Register(r, w) })
	d := outbox.NewDispatcher(pool, c, slog.New(slog.DiscardHandler), nil)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { d.Run(ctx); close(done) }()
	stop := sync.OnceFunc(func() { cancel(); <-done })
	defer stop()

	released := enqueued(t, pool, "1", river.InsertManyParams{Args: worktest.CountArgs{N: 1},
		InsertOpts: work.ForGuild(&river.InsertOpts{Queue: string(work.Sync), MaxAttempts: 7}, "99")})
	d.Release(released)
	ran := <-w.Runs
	j, err := c.JobGet(t.Context(), ran)
	if err != nil {
		t.Fatal(err)
	}
	var args worktest.CountArgs
	if err := json.Unmarshal(j.EncodedArgs, &args); err != nil || args.N != 1 ||
		j.Queue != string(work.Sync) || j.MaxAttempts != 7 || !strings.Contains(string(j.Metadata), `"guild_id": "99"`) {
		t.Errorf("dispatched job = queue %s, max attempts %d, args %s, metadata %s", j.Queue, j.MaxAttempts, j.EncodedArgs, j.Metadata)
	}
	d.Release(released)
	unreleased := enqueued(t, pool, "2", river.InsertManyParams{Args: worktest.CountArgs{N: 2}, InsertOpts: &river.InsertOpts{Queue: string(work.Interactive)}})
	if _, err := pool.Exec(t.Context(), `UPDATE interaction_outbox SET release_at = now() - interval '1 second' WHERE id = $1`, unreleased); err != nil {
		t.Fatal(err)
	}
	<-w.Runs
	wait.Until(t, "both jobs completed", func() bool {
		var n int
		pool.QueryRow(t.Context(), `SELECT count(*) FROM river_job WHERE kind = 'test_count' AND state = 'completed'`).Scan(&n)
		return n == 2
	})
	// Run moves rows one batch at a time and, stopped, moves what was
	// released before returning: once it has returned, a second move of
	// either row would have inserted its jobs.
	stop()
	if jobs, outbox := jobCount(t, pool); jobs != 2 || outbox != 0 {
		t.Errorf("%d jobs and %d outbox rows, want 2 and none", jobs, outbox)
	}
}

// Two processes sweeping the same rows move each once: one takes them,
// the other skips them while they are locked.
func TestDispatchersRaceForOverdueRows(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t)
	w := worktest.NewCounter(64)
	c := worktest.Client(t, pool, func(r *work.Registry) { work.Register(r, w) })
	for i := range 20 {
		enqueued(t, pool, "e"+string(rune('a'+i)), river.InsertManyParams{Args: worktest.CountArgs{N: i}, InsertOpts: &river.InsertOpts{Queue: string(work.Interactive)}})
	}
	if _, err := pool.Exec(t.Context(), `UPDATE interaction_outbox SET release_at = now() - interval '1 second'`); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	for range 2 {
		go outbox.NewDispatcher(pool, c, slog.New(slog.DiscardHandler), nil).Run(ctx)
	}
	wait.Until(t, "the outbox to empty", func() bool { _, outbox := jobCount(t, pool); return outbox == 0 })
	if jobs, _ := jobCount(t, pool); jobs != 20 {
		t.Errorf("%d jobs from 20 rows", jobs)
	}
}

// While the process is busy with a rush its jobs wait anyway, so the
// dispatcher lingers for more rows and moves them in one transaction; a
// row released when the process is not busy moves at once.
func TestDispatcherLingersWhileTheProcessIsBusy(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t)
	c := worktest.Client(t, pool, func(r *work.Registry) { work.Register(r, worktest.NewCounter(8)) })
	var busy atomic.Bool
	busy.Store(true)
	d := outbox.NewDispatcher(pool, c, slog.New(slog.DiscardHandler), busy.Load)
	outbox.SetBatch(d, 2, time.Millisecond, time.Hour)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go d.Run(ctx)
	transactions := func() (jobs, txs int) {
		pool.QueryRow(t.Context(), `SELECT count(*), count(DISTINCT xmin::text) FROM river_job WHERE kind = 'test_count'`).Scan(&jobs, &txs)
		return jobs, txs
	}
	job := func(n int) river.InsertManyParams {
		return river.InsertManyParams{Args: worktest.CountArgs{N: n}, InsertOpts: &river.InsertOpts{Queue: string(work.Interactive)}}
	}
	d.Release(enqueued(t, pool, "busy-1", job(1)))
	time.Sleep(50 * time.Millisecond) // far past the linger of a process that is not busy
	if jobs, _ := transactions(); jobs != 0 {
		t.Fatalf("%d jobs moved while the dispatcher should linger", jobs)
	}
	d.Release(enqueued(t, pool, "busy-2", job(2)))
	wait.Until(t, "the busy batch moved", func() bool { jobs, _ := transactions(); return jobs == 2 })
	if _, txs := transactions(); txs != 1 {
		t.Errorf("the two rows released while busy moved in %d transactions, want 1", txs)
	}
	busy.Store(false)
	d.Release(enqueued(t, pool, "quiet", job(3)))
	wait.Until(t, "the row released when not busy moved alone", func() bool { jobs, _ := transactions(); return jobs == 3 })
}
