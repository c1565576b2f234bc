package bench

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/herald-bot/herald/internal/app"
	"github.com/herald-bot/herald/internal/config"
	"github.com/herald-bot/herald/internal/outbox"
	"github.com/herald-bot/herald/internal/store"
	"github.com/herald-bot/herald/internal/work"
)

// jobsConfig is herald's default configuration on dbURL, with workers in
// the interactive lane.
func jobsConfig(dbURL string, workers int) (config.Config, error) {
	env := map[string]string{"DISCORD_TOKEN": benchToken, "DATABASE_URL": dbURL}
	cfg, err := app.LoadConfig(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		return cfg, err
	}
	cfg.Lanes.Interactive = workers
	return cfg, nil
}

// heraldRig is herald's job layer, wired as app.New wires it.
type heraldRig struct {
	jobs, fast *pgxpool.Pool
	client     *work.Client
	writer     *outbox.GroupWriter
	dispatch   *outbox.Dispatcher
	budget     int
	stopLoops  context.CancelFunc
	loops      sync.WaitGroup
	started    bool
}

// benchInteractionToken is as long as a Discord interaction token, which
// the fast path keeps in the ledger beside the key.
var benchInteractionToken = strings.Repeat("t", 200)

func newHeraldRig(ctx context.Context, dbURL string, workers int, rec *recorder) (jobsRig, error) {
	cfg, err := jobsConfig(dbURL, workers)
	if err != nil {
		return nil, err
	}
	r := &heraldRig{}
	jp, fp, _ := app.Pools(cfg)
	r.budget = int(jp.Max + fp.Max)
	if r.jobs, err = store.Open(ctx, dbURL, jp); err != nil {
		return nil, err
	}
	if r.fast, err = store.Open(ctx, dbURL, fp); err != nil {
		r.jobs.Close()
		return nil, err
	}
	reg := work.NewRegistry()
	work.Register(reg, &noopWorker{rec: rec})
	log := slog.New(slog.DiscardHandler)
	if r.client, err = work.NewClient(r.jobs, work.Options{Lanes: cfg.Lanes, Timeouts: cfg.JobTimeouts, Registry: reg,
		ShutdownTimeout: cfg.ShutdownTimeout, Logger: log}); err != nil {
		r.fast.Close()
		r.jobs.Close()
		return nil, err
	}
	r.dispatch = outbox.NewDispatcher(r.jobs, r.client, log, nil)
	r.writer = outbox.NewGroupWriter(r.fast)
	loopCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	r.stopLoops = cancel
	r.loops.Go(func() { r.dispatch.Run(loopCtx) })
	r.loops.Go(func() { r.writer.Run(loopCtx, app.GroupWriters) })
	return r, nil
}

func (r *heraldRig) enqueue(ctx context.Context, seq int) error {
	b, err := outbox.NewBatch(outbox.Entry{Key: outbox.Key{Event: "bench-" + itoa(seq), RouteVersion: 1, Intent: outbox.IntentEvent}, Token: benchInteractionToken},
		river.InsertManyParams{Args: noopArgs{Seq: seq}, InsertOpts: work.ForGuild(&river.InsertOpts{Queue: benchQueue}, "1")})
	if err != nil {
		return err
	}
	id, inserted, err := r.writer.Insert(ctx, b)
	if err != nil {
		return err
	}
	if !inserted {
		return fmt.Errorf("job %d: its key was recorded already", seq)
	}
	r.dispatch.Release(id)
	return nil
}

func (r *heraldRig) inRiver(ctx context.Context, n int) error {
	return riverJobs(ctx, r.jobs, n)
}

func (r *heraldRig) start(ctx context.Context) error {
	r.started = true
	return r.client.Start(ctx)
}

func (r *heraldRig) close() {
	if r.started {
		// No-op jobs finish at once: a stop has nothing to wait for.
		_ = work.Stop(r.client, 5*time.Second, time.Second)
	}
	r.stopLoops()
	r.loops.Wait()
	r.fast.Close()
	r.jobs.Close()
}

func (r *heraldRig) conns() int { return r.budget }

// riverJobs waits until River's table holds n jobs.
func riverJobs(ctx context.Context, db *pgxpool.Pool, n int) error {
	var got int
	err := until(30*time.Second, fmt.Sprintf("%d River jobs", n), func() bool {
		return db.QueryRow(ctx, `SELECT count(*) FROM river_job`).Scan(&got) == nil && got >= n
	})
	if err != nil {
		return fmt.Errorf("%w: %d there", err, got)
	}
	return nil
}

// bareRig is a River client as River's documentation sets one up.
type bareRig struct {
	pool    *pgxpool.Pool
	client  *river.Client[pgx.Tx]
	budget  int
	started bool
}

func newBareRig(ctx context.Context, dbURL string, workers int, rec *recorder) (jobsRig, error) {
	cfg, err := jobsConfig(dbURL, workers)
	if err != nil {
		return nil, err
	}
	// As many connections as herald's two pools together.
	jp, fp, _ := app.Pools(cfg)
	r := &bareRig{budget: int(jp.Max + fp.Max)}
	if r.pool, err = store.Open(ctx, dbURL, store.Pool{Name: "bench-bare-river", Max: int32(r.budget)}); err != nil {
		return nil, err
	}
	ws := river.NewWorkers()
	river.AddWorker(ws, &noopWorker{rec: rec})
	if r.client, err = river.NewClient(riverpgxv5.New(r.pool), &river.Config{Logger: slog.New(slog.DiscardHandler),
		Queues: map[string]river.QueueConfig{benchQueue: {MaxWorkers: workers}}, Workers: ws}); err != nil {
		r.pool.Close()
		return nil, err
	}
	return r, nil
}

func (r *bareRig) enqueue(ctx context.Context, seq int) error {
	_, err := r.client.Insert(ctx, noopArgs{Seq: seq}, &river.InsertOpts{Queue: benchQueue})
	return err
}

func (r *bareRig) inRiver(context.Context, int) error { return nil }

func (r *bareRig) start(ctx context.Context) error {
	r.started = true
	return r.client.Start(ctx)
}

func (r *bareRig) close() {
	if r.started {
		// No-op jobs finish at once: a stop has nothing to wait for.
		stopCtx, cancel := context.WithTimeout(context.Background(), 6*time.Second)
		defer cancel()
		_ = r.client.Stop(stopCtx)
	}
	r.pool.Close()
}

func (r *bareRig) conns() int { return r.budget }
