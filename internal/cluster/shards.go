package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// ServeFunc serves one shard until ctx ends (the lease was lost, handed
// over, or herald stops). An error other than ctx's stops every shard
// of this process: a fatal gateway close, such as a rejected token.
type ServeFunc func(ctx context.Context, shard int) error

// Shards spreads count shards over the live processes and serves this
// process's share until ctx ends or a shard fails; then it stops its
// shards, hands them over and leaves. Each live process takes at most
// ceil(count/live): one holding more hands the excess back, one holding
// fewer takes free or expired shards. A shard is stopped here before its
// lease is given up, so two processes never serve it at once — unless
// this one cannot reach Postgres past its lease, and then it stops
// serving before the lease can have passed to another.
func (c *Cluster) Shards(ctx context.Context, count int, serve ServeFunc) error {
	if count < 1 {
		return fmt.Errorf("cluster: %d shards", count)
	}
	s := &shardSet{c: c, count: count, serve: serve, running: map[int]*running{}, failed: make(chan error, count)}
	defer s.leave()
	tick := time.NewTicker(c.o.Every)
	defer tick.Stop()
	renewed := time.Now()
	for {
		// The lease runs from before the renewal was sent: Postgres's
		// now() is later, so this process stops serving before the lease
		// it wrote can expire. It looks once a tick, so past Lease-2*Every
		// it stops within Lease-Every when ticks come on time, leaving
		// one Every for a tick that comes late on a busy machine.
		began := time.Now()
		err := s.balance(ctx)
		switch {
		case err == nil:
			renewed = began
		case ctx.Err() != nil:
		case time.Since(renewed) > c.o.Lease-2*c.o.Every:
			c.o.Logger.WarnContext(ctx, "cluster: leases not renewed in time; stopping this process's shards", "err", err)
			s.stopAll()
		default:
			c.o.Logger.WarnContext(ctx, "cluster: leases not renewed", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case err := <-s.failed:
			return err
		case <-tick.C:
		}
	}
}

// Held is the shards this process serves now, for status and /readyz.
func (c *Cluster) Held(ctx context.Context) ([]int, error) {
	rows, err := c.o.DB.Query(ctx, `SELECT shard_id FROM herald_shards WHERE owner = $1 AND lease_until > now() ORDER BY shard_id`, c.id)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[int])
}

type shardSet struct {
	c       *Cluster
	count   int
	serve   ServeFunc
	mu      sync.Mutex
	running map[int]*running
	failed  chan error
	created bool
	live    int // as the last balance counted
	rank    int // this process's place among the live, oldest first
}

type running struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// balance renews this process's leases and moves it toward its share.
func (s *shardSet) balance(ctx context.Context) error {
	c := s.c
	var mine []int
	var fair, live, rank int
	err := pgx.BeginFunc(ctx, c.o.DB, func(tx pgx.Tx) error {
		lease := c.o.Lease.Seconds()
		tag, err := tx.Exec(ctx, `UPDATE herald_processes SET lease_until = now() + make_interval(secs => $2) WHERE id = $1`, c.id, lease)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			// Taken for dead (a partition longer than the lease): join again.
			if _, err := tx.Exec(ctx, `INSERT INTO herald_processes (id, host, pid, boot, version, lease_until)
				VALUES ($1, $2, $3, $4, $5, now() + make_interval(secs => $6))`, c.id, c.host, c.pid, boot, c.o.Version, lease); err != nil {
				return err
			}
		}
		if !s.created {
			if _, err := tx.Exec(ctx, `INSERT INTO herald_shards (shard_count, shard_id) SELECT $1, g FROM generate_series(0, $1 - 1) g
				ON CONFLICT DO NOTHING`, s.count); err != nil {
				return err
			}
		}
		if err := tx.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE (started_at, id) < (SELECT started_at, id FROM herald_processes WHERE id = $1))
			FROM herald_processes WHERE lease_until > now()`, c.id).Scan(&live, &rank); err != nil {
			return err
		}
		fair = (s.count + max(live, 1) - 1) / max(live, 1)
		rows, err := tx.Query(ctx, `UPDATE herald_shards SET lease_until = now() + make_interval(secs => $3)
			WHERE shard_count = $1 AND owner = $2 RETURNING shard_id`, s.count, c.id, lease)
		if err != nil {
			return err
		}
		if mine, err = pgx.CollectRows(rows, pgx.RowTo[int]); err != nil {
			return err
		}
		if need := fair - len(mine); need > 0 {
			rows, err := tx.Query(ctx, `UPDATE herald_shards SET owner = $2, lease_until = now() + make_interval(secs => $3)
				WHERE (shard_count, shard_id) IN (SELECT shard_count, shard_id FROM herald_shards
					WHERE shard_count = $1 AND (owner IS NULL OR lease_until < now()) ORDER BY shard_id LIMIT $4 FOR UPDATE SKIP LOCKED)
				RETURNING shard_id`, s.count, c.id, lease, need)
			if err != nil {
				return err
			}
			won, err := pgx.CollectRows(rows, pgx.RowTo[int])
			if err != nil {
				return err
			}
			mine = append(mine, won...)
		}
		if err := rescueJobs(ctx, tx, c.o.Logger); err != nil {
			return err
		}
		// Dead processes' rows are kept an hour for whoever investigates.
		_, err = tx.Exec(ctx, `DELETE FROM herald_processes WHERE lease_until < now() - interval '1 hour'`)
		return err
	})
	if err != nil {
		return fmt.Errorf("cluster: balance shards: %w", err)
	}
	s.created = true
	if (live != s.live || rank != s.rank) && c.o.OnLive != nil {
		c.o.OnLive(live, rank)
	}
	s.live, s.rank = live, rank
	slices.Sort(mine)
	if len(mine) > fair {
		if err := s.handOver(ctx, mine[fair:]); err != nil {
			return err
		}
		mine = mine[:fair]
	}
	s.follow(ctx, mine)
	c.balanced.Store(true)
	return nil
}

// follow starts the shards held and not served, and stops the served
// ones no longer held (taken by another after this process lost them).
func (s *shardSet) follow(ctx context.Context, held []int) {
	s.mu.Lock()
	var gone []int
	for shard := range s.running {
		if !slices.Contains(held, shard) {
			gone = append(gone, shard)
		}
	}
	s.mu.Unlock()
	s.stop(gone)
	for _, shard := range held {
		s.start(ctx, shard)
	}
}

func (s *shardSet) start(ctx context.Context, shard int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.running[shard]; ok || ctx.Err() != nil {
		return
	}
	sctx, cancel := context.WithCancel(ctx)
	r := &running{cancel: cancel, done: make(chan struct{})}
	s.running[shard] = r
	s.c.o.Logger.InfoContext(ctx, "cluster: serving shard", "shard", shard, "shards", s.count)
	go func() {
		defer close(r.done)
		if err := s.serve(sctx, shard); err != nil && sctx.Err() == nil {
			s.failed <- err
		}
	}()
}

// stop ends the shards' serving and waits for it.
func (s *shardSet) stop(shards []int) {
	var wait []*running
	s.mu.Lock()
	for _, shard := range shards {
		if r, ok := s.running[shard]; ok {
			r.cancel()
			wait = append(wait, r)
			delete(s.running, shard)
		}
	}
	s.mu.Unlock()
	for _, r := range wait {
		<-r.done
	}
}

func (s *shardSet) stopAll() {
	s.mu.Lock()
	shards := make([]int, 0, len(s.running))
	for shard := range s.running {
		shards = append(shards, shard)
	}
	s.mu.Unlock()
	s.stop(shards)
}

// handOver stops the shards, then gives up their leases for others to
// take at their next balance.
func (s *shardSet) handOver(ctx context.Context, shards []int) error {
	s.stop(shards)
	s.c.o.Logger.InfoContext(ctx, "cluster: handing shards over", "shards", shards)
	_, err := s.c.o.DB.Exec(ctx, `UPDATE herald_shards SET owner = NULL, lease_until = '-infinity'
		WHERE shard_count = $1 AND owner = $2 AND shard_id = ANY($3)`, s.count, s.c.id, shards)
	return err
}

// leave stops every shard, hands all over and ends this process's lease.
func (s *shardSet) leave() {
	s.stopAll()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err := s.c.o.DB.Exec(ctx, `WITH gone AS (UPDATE herald_processes SET lease_until = now() WHERE id = $1)
		UPDATE herald_shards SET owner = NULL, lease_until = '-infinity' WHERE owner = $1`, s.c.id)
	if err != nil && !errors.Is(err, context.Canceled) {
		s.c.o.Logger.Warn("cluster: could not hand shards over; they move when their leases expire", "err", err)
	}
}
