// Package cluster lets several herald processes share one bot token
// through Postgres: each live process holds a lease it renews every
// second (herald_processes), the gateway's shards are spread over the
// live processes by leases of their own (herald_shards), and IDENTIFY
// turns under Discord's max_concurrency are taken from one table for all
// of them (herald_identify). A process that dies loses what it held when
// its lease expires; one that stops hands it over at once.
package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Options configure a process's membership.
type Options struct {
	DB      *pgxpool.Pool
	Version string
	Logger  *slog.Logger
	// Lease is how long a process and its shards stay its own without a
	// renewal: how soon a dead process's shards move. Every is how often
	// leases are renewed and shards rebalanced, under a third of Lease.
	// Defaults: 5 s and 1 s.
	Lease, Every time.Duration
	// OnLive, when set, hears how many processes are live and this one's
	// rank among them (0 the oldest) each time either changes: the REST
	// engine divides the bot's limits by them (transport.Engine.Share).
	OnLive func(live, rank int)
	// Host names the machine; "" is its hostname. Tests running several
	// members in one process give each a host of its own.
	Host string
	// ID names the process ("" makes one from host and pid, as NewID
	// does): herald gives River the same, so a dead process's running
	// jobs are found by it (rescue.go).
	ID string
}

// NewID names a new process on host ("" is this machine's hostname).
func NewID(host string) string {
	if host == "" {
		host, _ = os.Hostname()
	}
	var b [4]byte
	rand.Read(b[:])
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b[:]))
}

// Cluster is this process's membership.
type Cluster struct {
	o    Options
	id   string
	host string
	pid  int
	// balanced is set once Shards took this process's share the first
	// time: before that, holding no shard means nothing yet.
	balanced atomic.Bool
}

// boot names this OS process apart from a later one given the same pid.
var boot = func() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}()

// Join registers this process as live.
func Join(ctx context.Context, o Options) (*Cluster, error) {
	if o.DB == nil || o.Logger == nil {
		return nil, errors.New("cluster: Options need DB and Logger")
	}
	if o.Lease <= 0 {
		o.Lease = 5 * time.Second
	}
	if o.Every <= 0 {
		o.Every = time.Second
	}
	if 3*o.Every >= o.Lease {
		return nil, fmt.Errorf("cluster: renewing every %s cannot keep a lease of %s: renew at least three times a lease", o.Every, o.Lease)
	}
	host := o.Host
	if host == "" {
		host, _ = os.Hostname()
	}
	c := &Cluster{o: o, host: host, pid: os.Getpid(), id: o.ID}
	if c.id == "" {
		c.id = NewID(host)
	}
	if _, err := o.DB.Exec(ctx, `INSERT INTO herald_processes (id, host, pid, boot, version, lease_until) VALUES ($1, $2, $3, $4, $5, now() + make_interval(secs => $6))`,
		c.id, host, c.pid, boot, o.Version, o.Lease.Seconds()); err != nil {
		return nil, fmt.Errorf("cluster: join: %w", err)
	}
	if err := c.buryLocal(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// Balanced reports whether this process has taken its share of the
// shards at least once.
func (c *Cluster) Balanced() bool { return c.balanced.Load() }

// ID names this process in herald_processes, logs and /herald status.
func (c *Cluster) ID() string { return c.id }

// buryLocal ends the leases of earlier processes on this host whose
// process is gone — the one this process replaces after a crash, above
// all — so their shards and buckets move now instead of when the leases
// run out, and their running jobs are rerun at the next balance.
func (c *Cluster) buryLocal(ctx context.Context) error {
	rows, err := c.o.DB.Query(ctx, `SELECT id, pid, boot FROM herald_processes WHERE host = $1 AND id <> $2 AND lease_until > now()`, c.host, c.id)
	if err != nil {
		return fmt.Errorf("cluster: read this host's processes: %w", err)
	}
	var dead []string
	var id, theirBoot string
	var pid int
	if _, err := pgx.ForEachRow(rows, []any{&id, &pid, &theirBoot}, func() error {
		// Gone: its pid is no process, or this one's pid in an earlier
		// life (a container restarted under the same name and pid).
		if (pid == c.pid && theirBoot != boot) || (pid != c.pid && errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)) {
			dead = append(dead, id)
		}
		return nil
	}); err != nil {
		return fmt.Errorf("cluster: read this host's processes: %w", err)
	}
	if len(dead) == 0 {
		return nil
	}
	c.o.Logger.InfoContext(ctx, "cluster: taking over from processes of this host that are gone", "processes", len(dead))
	_, err = c.o.DB.Exec(ctx, `WITH gone AS (UPDATE herald_processes SET lease_until = now() WHERE id = ANY($1) RETURNING id),
			buckets AS (UPDATE herald_buckets SET lease_until = now() WHERE owner IN (SELECT id FROM gone))
		UPDATE herald_shards SET owner = NULL, lease_until = '-infinity' WHERE owner IN (SELECT id FROM gone)`, dead)
	return err
}

// Member is one live process as Live reports it.
type Member struct {
	ID      string    `json:"id"`
	Host    string    `json:"host"`
	Version string    `json:"version"`
	Started time.Time `json:"started"`
	Shards  []int     `json:"shards"`
	// Buckets is how many Discord rate-limit buckets it holds leases on.
	Buckets int `json:"buckets"`
}

// Live lists the live processes on db, oldest first, with their shards
// and how many buckets each holds: what /herald status and the admin
// server show.
func Live(ctx context.Context, db *pgxpool.Pool) ([]Member, error) {
	rows, err := db.Query(ctx, `SELECT p.id, p.host, p.version, p.started_at,
			coalesce(array_agg(s.shard_id ORDER BY s.shard_id) FILTER (WHERE s.shard_id IS NOT NULL), '{}'),
			(SELECT count(*) FROM herald_buckets b WHERE b.owner = p.id AND b.lease_until > now())
		FROM herald_processes p LEFT JOIN herald_shards s ON s.owner = p.id AND s.lease_until > now()
		WHERE p.lease_until > now() GROUP BY p.id ORDER BY p.started_at, p.id`)
	if err != nil {
		return nil, fmt.Errorf("cluster: members: %w", err)
	}
	defer rows.Close()
	var out []Member
	for rows.Next() {
		var m Member
		var shards []int32
		if err := rows.Scan(&m.ID, &m.Host, &m.Version, &m.Started, &shards, &m.Buckets); err != nil {
			return nil, err
		}
		for _, s := range shards {
			m.Shards = append(m.Shards, int(s))
		}
		out = append(out, m)
	}
	return out, rows.Err()
}
