package work

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"

	"github.com/herald-bot/herald/internal/clock"
)

// Options configures the River client.
type Options struct {
	Lanes LaneWorkers
	// Registry holds every job kind herald can work; features add theirs.
	Registry *Registry
	// ShutdownTimeout is how long running jobs may finish once a stop
	// begins; after it their contexts are cancelled.
	ShutdownTimeout time.Duration
	// Timeouts bound one attempt of a job per lane (zero: the defaults).
	Timeouts LaneTimeouts
	Logger   *slog.Logger
	// Registerer receives the job metrics when set.
	Registerer prometheus.Registerer
	// ID names the client in River's attempted_by: the process's id in
	// the cluster, so its jobs are rerun at once if it dies ("" is River's
	// own, hostname and time).
	ID string
	// Clock is what jobs are scheduled and fetched by once a test moved
	// it ahead; nil is the database's clock, as in production.
	Clock *clock.Clock
	// Partitions, when set, route each guild's jobs to the process
	// serving its shard (partition.go).
	Partitions *Partitions
	// Yield, when set, holds jobs back while a rush of interactions has
	// left the process short of CPU (yield.go).
	Yield *Yield
}

// Client is the River client that inserts and works herald's jobs.
type Client = river.Client[pgx.Tx]

// NewClient builds a River client working every lane with its configured
// number of workers. With no job kinds registered the client can only
// insert: River refuses to work queues without workers.
func NewClient(pool *pgxpool.Pool, o Options) (*Client, error) {
	c, err := river.NewClient(riverpgxv5.New(pool), Config(pool, o))
	if err != nil {
		return nil, fmt.Errorf("work: river client: %w", err)
	}
	return c, nil
}

// Config is River's configuration of herald's client on pool: the lanes,
// herald's job middleware and the registry's kinds. NewClient builds the
// client from it; worktest works single jobs under it.
func Config(pool *pgxpool.Pool, o Options) *river.Config {
	if o.Timeouts == (LaneTimeouts{}) {
		o.Timeouts = DefaultJobTimeouts
	}
	if o.Registry != nil {
		o.Registry.timeouts = o.Timeouts
	}
	// River's rescuer looks at jobs running longer than the shortest
	// backstop and reruns those past their own lane's (laneWorker): minutes,
	// not River's default hour, so a view job still fills its reply.
	rescue := slices.Min([]time.Duration{backstop(o.Timeouts, Interactive), backstop(o.Timeouts, Events),
		backstop(o.Timeouts, Sync), backstop(o.Timeouts, Background)})
	// ordering is outermost but for Yield (River runs the first middleware
	// first), so it sees errors as outcomes mapped them: a rate-limit
	// snooze is no finish, a cancel for a missing target is. laneCalls is
	// innermost: what it puts in the context reaches the worker. Yield
	// comes before all, so a job waiting for the fast path has touched
	// nothing yet.
	var mw []rivertype.Middleware
	if o.Yield != nil {
		mw = append(mw, o.Yield)
	}
	mw = append(mw, &ordering{db: pool}, &outcomes{metrics: newMetrics(o.Registerer, pool)}, &laneCalls{timeouts: o.Timeouts}, &dueSoon{clock: o.Clock})
	cfg := &river.Config{FetchCooldown: notifyCooldown, ID: o.ID, SoftStopTimeout: o.ShutdownTimeout, Logger: riverLogger(o.Logger), JobTimeout: rescue, RescueStuckJobsAfter: rescue,
		ReindexerIndexNames: reindexed(), Middleware: mw}
	if o.Partitions != nil {
		cfg.Middleware = append(cfg.Middleware, o.Partitions)
	}
	if o.Clock != nil {
		cfg.Test.Time = riverTime{o.Clock}
	}
	if o.Registry != nil && len(o.Registry.sections) > 0 {
		cfg.Queues = Queues(o.Lanes)
		cfg.Workers = o.Registry.workers
		cfg.PeriodicJobs = o.Registry.periodic
	}
	return cfg
}

// reindexed names the indexes River's reindexer rebuilds: River's own,
// less the one on args that herald's migrations drop
// (migrations/00036_river_job_args_index.sql).
func reindexed() []string {
	return slices.DeleteFunc(river.ReindexerIndexNamesDefault(), func(n string) bool { return n == "river_job_args_index" })
}

// riverTime is River's view of a test's clock: until the test moves it
// ahead, River keeps asking the database for the time, as in production.
type riverTime struct{ c *clock.Clock }

func (r riverTime) Now() time.Time { return r.c.Now() }

func (r riverTime) NowOrNil() *time.Time {
	if r.c.Ahead() == 0 {
		return nil
	}
	now := r.c.Now().UTC()
	return &now
}

// Stop stops fetching new jobs and waits for running ones. River cancels
// the jobs still running after the client's ShutdownTimeout; grace bounds
// how long Stop then waits for them to return.
func Stop(c *Client, shutdownTimeout, grace time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout+grace)
	defer cancel()
	if err := c.Stop(ctx); err != nil {
		return fmt.Errorf("work: stop: jobs still running after %s: %w", shutdownTimeout+grace, err)
	}
	return nil
}
