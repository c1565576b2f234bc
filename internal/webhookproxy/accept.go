package webhookproxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/herald-bot/herald/internal/webhookproxy/execute"
)

// Group commit, as outbox.GroupWriter does it for interactions: every
// delivery waiting when a writer starts goes into one transaction and
// one COMMIT — one WAL flush for all of them — so the cost per accepted
// request falls as the load rises, while a lone request is written at
// once. No caller is answered before its own row is committed. A group
// is bounded in bodies' bytes too, and bodies over largeBody are written
// one at a time by a writer of their own, so large posts never hold the
// small ones behind them. Each target's deliveries go to one writer (by
// the target's hash), so writers never wait on each other's target rows.
const (
	acceptMax      = 200             // deliveries in one transaction
	acceptMaxBytes = 16 << 20        // their bodies' bytes, past the first
	acceptTimeout  = 5 * time.Second // one transaction's deadline
	acceptWriters  = 2               // for bodies up to largeBody
	largeBody      = 1 << 20
)

// delivery is one request to accept; fp is its token's fingerprint.
type delivery struct {
	target, webhookID, token, fp, threadID, variant, event, service, contentType string
	body                                                                         []byte
}

type acceptItem struct {
	d     delivery
	state atomic.Int32 // queued, taken by a writer, or abandoned by its caller
	done  chan acceptResult
}

const (
	itemQueued int32 = iota
	itemTaken
	itemAbandoned
)

type acceptResult struct {
	id  int64
	err error // an *execute.Error for a refusal, anything else: not stored
}

// acceptor writes deliveries in groups.
type acceptor struct {
	db     *pgxpool.Pool
	jobs   inserter
	batch  prometheus.Observer
	quotas quotas
	queues []chan *acceptItem // bodies up to largeBody, one per writer
	large  chan *acceptItem
}

func newAcceptor(db *pgxpool.Pool, jobs inserter, batch prometheus.Observer, q quotas) *acceptor {
	a := &acceptor{db: db, jobs: jobs, batch: batch, quotas: q, large: make(chan *acceptItem, acceptMax)}
	for range acceptWriters {
		a.queues = append(a.queues, make(chan *acceptItem, 4*acceptMax))
	}
	return a
}

// queueOf is the queue of d's writer.
func (a *acceptor) queueOf(d delivery) chan *acceptItem {
	if len(d.body) > largeBody {
		return a.large
	}
	h := fnv.New32a()
	h.Write([]byte(d.target))
	return a.queues[h.Sum32()%uint32(len(a.queues))]
}

// errStopped means the proxy is stopping and took nothing more.
var errStopped = errors.New("webhookproxy: stopping")

// accept stores d with whatever else is waiting and returns its id. On
// an error d is not stored — unless ctx ended after a transaction took
// it: then the caller is told the proxy is unavailable while d may still
// land, and a retry may deliver it twice, a gap no HTTP API closes. A
// request no transaction took yet is withdrawn, never written later.
func (a *acceptor) accept(ctx context.Context, d delivery) (int64, error) {
	it := &acceptItem{d: d, done: make(chan acceptResult, 1)}
	select {
	case a.queueOf(d) <- it:
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	select {
	case r := <-it.done:
		return r.id, r.err
	case <-ctx.Done():
		it.state.CompareAndSwap(itemQueued, itemAbandoned)
		return 0, ctx.Err()
	}
}

// run writes queued deliveries until ctx ends, then refuses what is left.
func (a *acceptor) run(ctx context.Context) {
	var wg sync.WaitGroup
	for _, q := range a.queues {
		wg.Go(func() { a.writer(ctx, q, acceptMax) })
	}
	wg.Go(func() { a.writer(ctx, a.large, 1) })
	wg.Wait()
	for _, q := range append(a.queues, a.large) {
		for len(q) > 0 {
			(<-q).done <- acceptResult{err: errStopped}
		}
	}
}

// writer writes groups of up to most items from q until ctx ends.
func (a *acceptor) writer(ctx context.Context, q chan *acceptItem, most int) {
	var next *acceptItem // taken from the queue past a full group
	for {
		if next == nil {
			select {
			case <-ctx.Done():
				return
			case next = <-q:
			}
		}
		var items []*acceptItem
		if items, next = a.gather(q, next, most); len(items) > 0 {
			a.write(items)
		}
	}
}

// gather takes first and the others waiting in q, up to most and
// acceptMaxBytes, skipping those their callers withdrew. An item that
// would pass the bytes is handed back to start the next group.
func (a *acceptor) gather(q chan *acceptItem, first *acceptItem, most int) (items []*acceptItem, next *acceptItem) {
	var size int
	take := func(it *acceptItem) {
		if it.state.CompareAndSwap(itemQueued, itemTaken) {
			items = append(items, it)
			size += len(it.d.body)
		}
	}
	take(first)
	for len(items) < most {
		select {
		case it := <-q:
			if len(items) > 0 && size+len(it.d.body) > acceptMaxBytes {
				return items, it
			}
			take(it)
		default:
			return items, nil
		}
	}
	return items, nil
}

// write commits items in one transaction and answers each. When the
// group fails, each item is tried alone, so one caller's request that
// cannot be stored never fails the others batched with it.
func (a *acceptor) write(items []*acceptItem) {
	a.batch.Observe(float64(len(items)))
	results, err := a.commit(items)
	if err != nil && len(items) > 1 {
		for _, it := range items {
			a.write([]*acceptItem{it})
		}
		return
	}
	for i, it := range items {
		if err != nil {
			it.done <- acceptResult{err: fmt.Errorf("webhookproxy: accept: %w", err)}
			continue
		}
		it.done <- results[i]
	}
}

// commit writes items in one transaction of two round trips: the BEGIN
// rides in the reads' (pipeTx), the COMMIT in the writes' unless a target
// needs a drain job, which River inserts in the transaction first.
func (a *acceptor) commit(items []*acceptItem) ([]acceptResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), acceptTimeout)
	defer cancel()
	conn, err := a.db.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	// The pool closes a connection released inside a transaction, which
	// ends it: a failed write never leaves one open.
	defer conn.Release()
	tx := newPipeTx(conn.Conn())
	results, committed, err := a.writeTx(ctx, tx, items)
	switch {
	case err != nil:
		tx.Rollback(ctx)
		return nil, err
	case committed:
		return results, nil
	}
	return results, tx.Commit(ctx)
}

// target is a queue's state as the accepting transaction locked it.
type target struct {
	depth int
	live  bool // a River job drains it
}

// writeTx writes items in tx and reports whether it committed tx too.
func (a *acceptor) writeTx(ctx context.Context, tx pgx.Tx, items []*acceptItem) (results []acceptResult, committed bool, err error) {
	var names, hooks, threads, services []string
	seen := map[string]bool{}
	for _, it := range items {
		d := it.d
		if !seen[d.target] {
			seen[d.target] = true
			names, hooks, threads = append(names, d.target), append(hooks, d.webhookID), append(threads, d.threadID)
		}
		if !seen["key:"+d.service] {
			seen["key:"+d.service] = true
			services = append(services, d.service)
		}
	}
	// The reads, the targets' creation and their locks, and the ids go
	// in one round trip: under load each round trip is a wake-up of both
	// sides, and the machine's CPU is what bounds the accept rate.
	reads := &pgx.Batch{}
	// Postgres re-plans a prepared statement whose generic plan it
	// guesses dearer than a custom one (nextval over generate_series($1)
	// always): 5% of its CPU at full rate. Every statement here reads or
	// writes a handful of rows by key, which one plan serves.
	reads.Queue("SET LOCAL plan_cache_mode = force_generic_plan")
	dead := queueDeadWebhooks(reads, hooks)
	queueEnsureTargets(reads, names, hooks, threads)
	targets := queueLockTargets(reads, names)
	u := queueUsage(reads, services, hooks)
	ids := queueIDs(reads, len(items))
	if err := tx.SendBatch(ctx, reads).Close(); err != nil {
		return nil, false, err
	}
	results = make([]acceptResult, len(items))
	var admitted []*acceptItem
	var admittedAt []int
	for i, it := range items {
		t := targets[it.d.target]
		switch {
		case dead[it.d.webhookID]:
			results[i].err = execute.ErrUnknownWebhook
		case !a.quotas.admit(u, it.d, t.depth > 0):
			results[i].err = queueFull()
		default:
			t.depth++
			targets[it.d.target] = t
			admitted, admittedAt = append(admitted, it), append(admittedAt, i)
		}
	}
	if len(admitted) == 0 {
		return results, false, nil
	}
	// Ids were taken for every item in order; the admitted keep theirs.
	added := map[string]int{}
	admittedIDs := make([]int64, len(admitted))
	for k, i := range admittedAt {
		results[i].id, admittedIDs[k] = (*ids)[i], (*ids)[i]
		added[admitted[k].d.target]++
	}
	writes := &pgx.Batch{}
	queueInsertDeliveries(writes, admitted, admittedIDs)
	queueDepths(writes, added)
	grown := slices.Collect(maps.Keys(added))
	committed = !slices.ContainsFunc(grown, func(n string) bool { return !targets[n].live })
	if committed {
		writes.Queue("COMMIT")
	}
	if err := tx.SendBatch(ctx, writes).Close(); err != nil {
		return nil, false, err
	}
	if committed {
		return results, true, nil
	}
	return results, false, startJobs(ctx, tx, a.jobs, targets, grown)
}

// queueFull is the answer when a queue is at its bound: Discord's 429
// shape, so clients wait and retry instead of losing the message.
func queueFull() *execute.Error {
	return &execute.Error{Status: http.StatusTooManyRequests, RetryAfter: fullRetryAfter.Seconds()}
}

// fullRetryAfter is how long a caller refused by a full queue waits: about
// what a target needs to deliver a few messages at Discord's webhook rate.
const fullRetryAfter = 2 * time.Second

// queueDeadWebhooks queues the read of those of hooks Discord said are
// gone; the map is filled when the batch runs.
func queueDeadWebhooks(b *pgx.Batch, hooks []string) map[string]bool {
	dead := map[string]bool{}
	b.Queue(`SELECT webhook_id FROM webhookproxy_webhooks WHERE webhook_id = ANY($1) AND dead_at IS NOT NULL`, hooks).Query(func(rows pgx.Rows) error {
		var id string
		_, err := pgx.ForEachRow(rows, []any{&id}, func() error {
			dead[id] = true
			return nil
		})
		return err
	})
	return dead
}

// queueEnsureTargets queues the creation of the targets' rows where
// missing.
func queueEnsureTargets(b *pgx.Batch, names, hooks, threads []string) {
	b.Queue(`INSERT INTO webhookproxy_targets (target, webhook_id, thread_id)
		SELECT * FROM unnest($1::text[], $2::text[], $3::text[]) ORDER BY 1 ON CONFLICT DO NOTHING`, names, hooks, threads)
}

// lockTargets locks the targets' rows, in name order so two writers never
// deadlock.
func lockTargets(ctx context.Context, tx pgx.Tx, names []string) (map[string]target, error) {
	b := &pgx.Batch{}
	out := queueLockTargets(b, names)
	return out, tx.SendBatch(ctx, b).Close()
}

// queueLockTargets queues lockTargets' statement; the map is filled when
// the batch runs.
func queueLockTargets(b *pgx.Batch, names []string) map[string]target {
	out := map[string]target{}
	b.Queue(`SELECT t.target, t.depth, j.state IS NOT NULL AND j.state NOT IN ('completed', 'cancelled', 'discarded')
		FROM webhookproxy_targets t LEFT JOIN river_job j ON j.id = t.job_id
		WHERE t.target = ANY($1) ORDER BY t.target FOR UPDATE OF t`, names).Query(func(rows pgx.Rows) error {
		var name string
		var t target
		_, err := pgx.ForEachRow(rows, []any{&name, &t.depth, &t.live}, func() error {
			out[name] = t
			return nil
		})
		return err
	})
	return out
}

// queueIDs queues taking n delivery ids, sorted when the batch has run,
// so a target's queue keeps the order its deliveries were accepted in.
func queueIDs(b *pgx.Batch, n int) *[]int64 {
	ids := new([]int64)
	b.Queue(`SELECT nextval('webhookproxy_deliveries_id_seq') FROM generate_series(1, $1)`, n).Query(func(rows pgx.Rows) error {
		var err error
		*ids, err = pgx.CollectRows(rows, pgx.RowTo[int64])
		slices.Sort(*ids)
		return err
	})
	return ids
}

// queueInsertDeliveries queues storing items, each under its id in ids,
// as pending, and adding them to the usage: this insert is the only way
// into the pending state, so no trigger counts it (migration 00031).
func queueInsertDeliveries(b *pgx.Batch, items []*acceptItem, ids []int64) {
	var targets, hooks, tokens, fps, threads, variants, events, services, types []string
	bodies := make([][]byte, 0, len(items))
	ones, sizes := make([]int64, 0, len(items)), make([]int64, 0, len(items))
	for _, it := range items {
		d := it.d
		targets, hooks, tokens, fps = append(targets, d.target), append(hooks, d.webhookID), append(tokens, d.token), append(fps, d.fp)
		threads, variants, events = append(threads, d.threadID), append(variants, d.variant), append(events, d.event)
		services, types = append(services, d.service), append(types, d.contentType)
		bodies = append(bodies, d.body)
		ones, sizes = append(ones, 1), append(sizes, int64(len(d.body)))
	}
	b.Queue(`INSERT INTO webhookproxy_deliveries
			(id, target, webhook_id, token, token_fp, thread_id, variant, event, service, content_type, body)
		SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
			$9::text[], $10::text[], $11::bytea[])`,
		ids, targets, hooks, tokens, fps, threads, variants, events, services, types, bodies)
	b.Queue(`SELECT webhookproxy_usage_add($1, $2, $3, $4)`, ones, sizes, services, hooks)
}

// inserter inserts jobs within a transaction: the Kit's work.Inserter,
// or the River client a job runs under.
type inserter interface {
	InsertManyTx(ctx context.Context, tx pgx.Tx, params []river.InsertManyParams) ([]*rivertype.JobInsertResult, error)
}

// startDrains adds the new depth to each locked target and gives a River
// job to every one that has none, in the caller's transaction: a pending
// delivery is never stored without a job that will reach it.
// Targets in also that added does not name get a job when they have none.
func startDrains(ctx context.Context, tx pgx.Tx, jobs inserter, added map[string]int, targets map[string]target, also ...string) error {
	b := &pgx.Batch{}
	queueDepths(b, added)
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return err
	}
	return startJobs(ctx, tx, jobs, targets, append(slices.Collect(maps.Keys(added)), also...))
}

// queueDepths queues adding to each target's depth.
func queueDepths(b *pgx.Batch, added map[string]int) {
	var names []string
	var counts []int32
	for name, n := range added {
		names, counts = append(names, name), append(counts, int32(n))
	}
	b.Queue(`UPDATE webhookproxy_targets t SET depth = t.depth + u.n
		FROM unnest($1::text[], $2::int[]) AS u(target, n) WHERE t.target = u.target`, names, counts)
}

// startJobs gives a River job to each of names whose locked target has no
// live one, and records it on the target.
func startJobs(ctx context.Context, tx pgx.Tx, jobs inserter, targets map[string]target, names []string) error {
	var params []river.InsertManyParams
	var idle []string
	for _, name := range names {
		if !targets[name].live && !slices.Contains(idle, name) {
			idle = append(idle, name)
			params = append(params, river.InsertManyParams{Args: drainArgs{Target: name}})
		}
	}
	if len(params) == 0 {
		return nil
	}
	res, err := jobs.InsertManyTx(ctx, tx, params)
	if err != nil {
		return err
	}
	// Results are matched to targets by their args, not their order.
	idle, jobIDs := idle[:0], make([]int64, 0, len(res))
	for _, r := range res {
		var args drainArgs
		if err := json.Unmarshal(r.Job.EncodedArgs, &args); err != nil {
			return err
		}
		idle, jobIDs = append(idle, args.Target), append(jobIDs, r.Job.ID)
	}
	_, err = tx.Exec(ctx, `UPDATE webhookproxy_targets t SET job_id = u.job_id
		FROM unnest($1::text[], $2::bigint[]) AS u(target, job_id) WHERE t.target = u.target`, idle, jobIDs)
	return err
}
