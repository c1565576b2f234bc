package work

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// Partitions route each guild's jobs to the process serving the guild's
// gateway shard. Discord's rate-limit buckets of a guild (its member
// roles, its channels) are shared by every process on the token, one
// holder at a time (internal/cluster); when any process could fetch any
// guild's job, three processes passed each guild's buckets back and
// forth, and a job held its worker up to MaxHold waiting for its turn
// or was snoozed to wait again. A job that names its guild (ForGuild) in
// a lane goes instead to that lane's queue of the guild's shard,
// "<lane>-shard-<n>", which only the process holding the shard's lease
// works: a guild's jobs run where its buckets stay. Jobs without a guild
// stay in the lanes every process works.
type Partitions struct {
	river.MiddlewareDefaults
	db     *pgxpool.Pool
	lanes  map[string]river.QueueConfig
	shards atomic.Int64 // 0 until the shard count is known: nothing is routed
	log    *slog.Logger

	mu      sync.Mutex
	leaving map[int]chan struct{} // shard → closed once its queues are let go
}

// NewPartitions routes the lanes' jobs in db once SetShards names the
// count; the queues of a shard get the lane's workers.
func NewPartitions(db *pgxpool.Pool, w LaneWorkers, log *slog.Logger) *Partitions {
	return &Partitions{db: db, lanes: Queues(w), log: log, leaving: map[int]chan struct{}{}}
}

// PartitionQueue is the queue of lane's jobs for the guilds of shard.
func PartitionQueue(lane Lane, shard int) string {
	return string(lane) + partitionSep + strconv.Itoa(shard)
}

const partitionSep = "-shard-"

// LaneOf is the lane a queue belongs to: the queue itself, or the lane of
// a shard's queue.
func LaneOf(queue string) Lane {
	lane, _, _ := strings.Cut(queue, partitionSep)
	return Lane(lane)
}

// LaneOfQueue is LaneOf in SQL, of river_job's queue column: what counts
// jobs by lane groups by it, so a lane's shard queues count as the lane.
const LaneOfQueue = "split_part(queue, '" + partitionSep + "', 1)"

// ShardOf is Discord's shard of a guild among count:
// (guild_id >> 22) % count (docs: Gateway, Sharding).
func ShardOf(guildID uint64, count int) int { return int((guildID >> 22) % uint64(count)) }

// SetShards starts routing by count shards. Jobs left in the queues of
// shards past count (the count changed since they were queued) go back
// to their lanes, where every process works them.
func (p *Partitions) SetShards(ctx context.Context, count int) error {
	_, err := p.db.Exec(ctx, `UPDATE river_job SET queue = `+LaneOfQueue+`
		WHERE state IN ('available', 'scheduled', 'retryable', 'pending')
			AND CASE WHEN strpos(queue, $1) > 0 THEN split_part(queue, $1, 2)::int >= $2 ELSE false END`, partitionSep, count)
	if err != nil {
		return err
	}
	p.shards.Store(int64(count))
	return nil
}

// InsertMany is River's insert middleware: it moves each job naming its
// guild from its lane to the lane's queue of the guild's shard.
func (p *Partitions) InsertMany(ctx context.Context, jobs []*rivertype.JobInsertParams, doInner func(context.Context) ([]*rivertype.JobInsertResult, error)) ([]*rivertype.JobInsertResult, error) {
	if n := int(p.shards.Load()); n > 0 {
		for _, j := range jobs {
			if _, lane := p.lanes[j.Queue]; lane {
				if g, ok := guildOf(j.Metadata); ok {
					j.Queue = PartitionQueue(Lane(j.Queue), ShardOf(g, n))
				}
			}
		}
	}
	return doInner(ctx)
}

// guildOf reads the guild a job's metadata names (ForGuild).
func guildOf(metadata []byte) (uint64, bool) {
	if len(metadata) == 0 {
		return 0, false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(metadata, &m) != nil {
		return 0, false
	}
	var id string
	if json.Unmarshal(m[MetadataGuild], &id) != nil {
		return 0, false
	}
	g, err := strconv.ParseUint(id, 10, 64)
	return g, err == nil
}

// A shard's queues are let go once the jobs running in them are done.
// River's Remove holds the client's queue lock while it waits, which
// would hold back the queues of a shard taken meanwhile and the client's
// own stop, whose escalation to cancelling jobs starts only once it has
// the lock. So each try waits removeTry, and the lock is free between
// tries. Past letGo (beyond the longest lane timeout, after which River
// cancels a job) the queue is left as it is.
const (
	removeTry = 50 * time.Millisecond
	letGo     = 10 * time.Minute
)

// Serve works the queues of shard on c until ctx ends (the shard's lease
// was lost or handed over). Then it stops fetching from them and returns
// at once; the jobs running in them finish here, and this process works
// the shard's queues again only once they have. A queue that cannot
// start (Postgres unreachable) is tried again every addRetry: the
// shard's jobs wait for Postgres, as every job does, and the process
// keeps the shard.
func (p *Partitions) Serve(ctx context.Context, c *Client, shard int) {
	p.mu.Lock()
	prev := p.leaving[shard]
	p.mu.Unlock()
	if prev != nil {
		select {
		case <-prev:
		case <-ctx.Done():
			return
		}
	}
	var added []string
	for lane, cfg := range p.lanes {
		q := PartitionQueue(Lane(lane), shard)
		if !p.add(ctx, c, q, cfg) {
			break
		}
		added = append(added, q)
	}
	<-ctx.Done()
	done := make(chan struct{})
	p.mu.Lock()
	p.leaving[shard] = done
	p.mu.Unlock()
	go func() {
		defer close(done)
		for _, q := range added {
			p.remove(c, q)
		}
	}()
}

// addRetry is how often a queue that could not start is tried again.
const addRetry = time.Second

// add starts queue q on c, trying again until it starts (true) or ctx
// ends (false).
func (p *Partitions) add(ctx context.Context, c *Client, q string, cfg river.QueueConfig) bool {
	for {
		err := p.start(ctx, c, q, cfg)
		if err == nil {
			return true
		}
		p.log.Warn("work: a shard's queue did not start; trying again", "queue", q, "err", err, "in", addRetry)
		select {
		case <-ctx.Done():
			return false
		case <-time.After(addRetry):
		}
	}
}

// start adds queue q to c and checks that its producer started. River
// keeps a queue whose start failed as added but stopped, and reports no
// error when the failure was a closed connection; its start's first
// statement stamps the queue's row, so a row not stamped since just
// before the Add tells. Such a queue is removed for the next try.
func (p *Partitions) start(ctx context.Context, c *Client, q string, cfg river.QueueConfig) error {
	var before time.Time
	if err := p.db.QueryRow(ctx, `SELECT now()`).Scan(&before); err != nil {
		return err
	}
	err := c.Queues().Add(q, cfg)
	if err == nil {
		err = p.stamped(ctx, q, before)
	}
	if err == nil {
		return nil
	}
	rctx, cancel := context.WithTimeout(ctx, addRetry)
	defer cancel()
	var notFound *river.QueueNotFoundError
	if rerr := c.Queues().Remove(rctx, q); rerr != nil && !errors.As(rerr, &notFound) {
		return errors.Join(err, rerr)
	}
	return err
}

// stamped is nil when queue q's producer stamped its row since before.
func (p *Partitions) stamped(ctx context.Context, q string, before time.Time) error {
	var ok bool
	if err := p.db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM river_queue WHERE name = $1 AND updated_at >= $2)`, q, before).Scan(&ok); err != nil {
		return err
	}
	if !ok {
		return errors.New("its producer did not start")
	}
	return nil
}

// remove takes queue q off c once its running jobs are done.
func (p *Partitions) remove(c *Client, q string) {
	tick := time.NewTicker(removeTry)
	defer tick.Stop()
	for end := time.Now().Add(letGo); ; {
		ctx, cancel := context.WithTimeout(context.Background(), removeTry)
		err := c.Queues().Remove(ctx, q)
		cancel()
		var notFound *river.QueueNotFoundError
		switch {
		case err == nil || errors.As(err, &notFound):
			return
		case !errors.Is(err, context.DeadlineExceeded) || time.Now().After(end):
			p.log.Warn("work: a shard's queue was not let go", "queue", q, "err", err)
			return
		}
		<-tick.C
	}
}
