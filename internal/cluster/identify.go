package cluster

import (
	"context"
	"fmt"
	"time"
)

// Reserve takes the next IDENTIFY turn of a max_concurrency rate-limit
// key (shard_id % max_concurrency) for whichever process asks, spaced by
// window, and returns how long to wait for it. The turns are kept in
// Postgres and timed by its clock, so processes on different machines
// share one pace.
func (c *Cluster) Reserve(ctx context.Context, key int, window time.Duration) (time.Duration, error) {
	var wait float64
	err := c.o.DB.QueryRow(ctx, `INSERT INTO herald_identify AS i (key, next_at) VALUES ($1, now() + make_interval(secs => $2))
		ON CONFLICT (key) DO UPDATE SET next_at = greatest(i.next_at, now()) + make_interval(secs => $2)
		RETURNING extract(epoch FROM i.next_at - make_interval(secs => $2) - now())`, key, window.Seconds()).Scan(&wait)
	if err != nil {
		return 0, fmt.Errorf("cluster: identify turn: %w", err)
	}
	return max(time.Duration(wait*float64(time.Second)), 0), nil
}
