package bench

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/herald-bot/herald/internal/cluster"
)

// ScaleResult is what `herald bench scale --json` prints.
type ScaleResult struct {
	Bursts       []ScaleBurst       `json:"bursts"`
	Interactions *ScaleInteractions `json:"interactions,omitempty"`
}

// ScaleBurst is one transport burst sent by 1, 2 and 3 members of one
// token, beside one engine alone.
type ScaleBurst struct {
	Burst      string     `json:"burst"`
	TimeScale  float64    `json:"time_scale"`
	MinSeconds float64    `json:"min_seconds"`
	Runs       []ScaleRun `json:"runs"`
}

// ScaleRun is one way of sending the burst.
type ScaleRun struct {
	// Members is how many engines, each a member of the cluster with its
	// own Postgres pool, sent the burst; Coordinated says whether their
	// buckets were leased (cluster.Buckets) or kept per member, as before.
	// Members 1 uncoordinated is the engine alone: the baseline.
	Members     int  `json:"members"`
	Coordinated bool `json:"coordinated"`
	ClientResult
	RatioToAlone float64 `json:"ratio_to_alone"`
	// Leases sums what the members' bucket leases cost.
	Leases cluster.BucketStats `json:"leases"`
	// QueriesPerRequest is the leases' Postgres statements per request
	// Discord saw; HotPathShare is the share of claims answered from
	// memory.
	QueriesPerRequest float64 `json:"queries_per_request"`
	HotPathShare      float64 `json:"hot_path_share"`
}

// scaleRuns are the ways each burst is sent, the baseline first.
var scaleRuns = []struct {
	members     int
	coordinated bool
}{{1, false}, {1, true}, {2, true}, {3, true}, {3, false}}

// RunScaleBursts sends each burst every way scaleRuns lists, each on a
// fresh simulator at the scale that makes its minimum target long. dbURL
// is a migrated database whose cluster tables the runs may empty.
func RunScaleBursts(ctx context.Context, dbURL string, bursts []Burst, target time.Duration) ([]ScaleBurst, error) {
	var out []ScaleBurst
	for _, b := range bursts {
		scale := target.Seconds() / b.Min.Seconds()
		sb := ScaleBurst{Burst: b.Name, TimeScale: scale, MinSeconds: b.Min.Seconds() * scale}
		var alone float64
		for _, way := range scaleRuns {
			if err := ctx.Err(); err != nil {
				return out, err
			}
			run, err := b.runMembers(ctx, dbURL, scale, way.members, way.coordinated)
			if err != nil {
				return out, fmt.Errorf("%s burst, %d members: %w", b.Name, way.members, err)
			}
			run.RatioToMin = run.Seconds / sb.MinSeconds
			if alone == 0 {
				alone = run.Seconds
			}
			run.RatioToAlone = run.Seconds / alone
			sb.Runs = append(sb.Runs, run)
		}
		out = append(out, sb)
	}
	return out, nil
}

// runMembers sends the burst through n engines, each a cluster member of
// its own, taking the burst's calls in turn as processes take jobs.
func (b Burst) runMembers(ctx context.Context, dbURL string, scale float64, n int, coordinated bool) (ScaleRun, error) {
	run := ScaleRun{Members: n, Coordinated: coordinated}
	if err := emptyCluster(ctx, dbURL); err != nil {
		return run, err
	}
	var leases []*cluster.Buckets
	res, err := b.runWith(scale, func(w *world, app string) (client, func(), error) {
		mctx, cancel := context.WithCancel(ctx)
		var stops []func()
		stop := func() {
			cancel()
			for _, s := range stops {
				s()
			}
		}
		rr := &roundRobin{}
		for i := range n {
			e := benchEngine(app, b.global, scale)
			e.Share(n, i)
			if coordinated {
				db, err := pgxpool.New(mctx, dbURL)
				if err != nil {
					stop()
					return nil, nil, err
				}
				stops = append(stops, db.Close)
				c, err := cluster.Join(mctx, cluster.Options{DB: db, Logger: slog.New(slog.DiscardHandler), Host: fmt.Sprintf("bench-%d", i), Version: "bench"})
				if err != nil {
					stop()
					return nil, nil, err
				}
				l := c.Buckets(cluster.BucketOptions{OnHashes: e.SeedHashes, Share: e})
				e.Coordinate(l)
				done := make(chan struct{})
				go func() { l.Run(mctx); close(done) }()
				// Leases go back before the pool closes (stops run in order).
				stops = append([]func(){func() { <-done }}, stops...)
				leases = append(leases, l)
			}
			rr.clients = append(rr.clients, engineClient(w, app, e))
		}
		return rr, stop, nil
	})
	run.ClientResult = res
	if err != nil {
		return run, err
	}
	claims := int64(0)
	for _, l := range leases {
		s := l.Stats()
		run.Leases.Memory += s.Memory
		run.Leases.Won += s.Won
		run.Leases.Lost += s.Lost
		run.Leases.Released += s.Released
		run.Leases.Renewed += s.Renewed
		run.Leases.Queries += s.Queries
		claims += s.Memory + s.Won + s.Lost
	}
	if res.Requests > 0 {
		run.QueriesPerRequest = float64(run.Leases.Queries) / float64(res.Requests)
	}
	if claims > 0 {
		run.HotPathShare = float64(run.Leases.Memory) / float64(claims)
	}
	return run, nil
}

// emptyCluster forgets earlier runs' members, leases and bucket hashes.
func emptyCluster(ctx context.Context, dbURL string) error {
	db, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.Exec(ctx, `TRUNCATE herald_buckets, herald_bucket_hashes, herald_processes, herald_shards, herald_identify`)
	return err
}

// roundRobin hands each call to the next member's client.
type roundRobin struct {
	clients []*heraldClient
	next    atomic.Uint64
}

func (r *roundRobin) pick() *heraldClient {
	return r.clients[(r.next.Add(1)-1)%uint64(len(r.clients))]
}

func (r *roundRobin) edit(ctx context.Context, ch, msg string) error {
	return r.pick().edit(ctx, ch, msg)
}
func (r *roundRobin) addRole(ctx context.Context, g, u, role string) error {
	return r.pick().addRole(ctx, g, u, role)
}
func (r *roundRobin) followup(ctx context.Context, app, token string) error {
	return r.pick().followup(ctx, app, token)
}
func (r *roundRobin) create(ctx context.Context, ch string) error { return r.pick().create(ctx, ch) }
