package outbox

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Group commit: under load, many interactions wait to write their batch
// at the same moment. A GroupWriter writes all that are waiting in one
// statement and one COMMIT — one WAL flush instead of one each — so the
// fast path's database cost per interaction falls as the load rises,
// while a lone interaction is written at once, as before. Nothing is
// answered before its own row is committed.
//
// A writer that takes a batch while another writer's statement is in
// flight waits up to gatherWindow for more, as Postgres's commit_delay
// does while commit_siblings are active: under such a load more batches
// are on their way, and each statement saved is a WAL flush and a round
// of Postgres CPU the next interactions would have queued behind.
const (
	groupMax     = 100             // batches in one statement
	groupTimeout = 2 * time.Second // one statement's deadline
	gatherWindow = 300 * time.Microsecond
)

// ErrNotWritten means a batch was given up before any statement carried
// it: it is certainly not in the database. ErrOutcomeUnknown means its
// caller stopped waiting while a statement carried it: it may land yet,
// and only the ledger can tell.
var (
	ErrNotWritten     = errors.New("outbox: the batch was not written")
	ErrOutcomeUnknown = errors.New("outbox: the batch's write has no outcome yet")
)

// GroupWriter writes batches of many interactions together.
type GroupWriter struct {
	db       *pgxpool.Pool
	queue    chan *groupItem
	max      int // groupMax, gatherWindow, groupTimeout: tests change them
	window   time.Duration
	timeout  time.Duration
	inFlight atomic.Int32 // statements being written
}

type groupItem struct {
	b     Batch
	state atomic.Int32 // queued, taken by a writer, or abandoned by its caller
	done  chan groupResult
}

const (
	itemQueued int32 = iota
	itemTaken
	itemAbandoned
)

type groupResult struct {
	id       int64
	inserted bool
	err      error
}

// NewGroupWriter returns a writer using db, which should leave it the
// connections for writers statements at once.
func NewGroupWriter(db *pgxpool.Pool) *GroupWriter {
	return &GroupWriter{db: db, queue: make(chan *groupItem, 4*groupMax), max: groupMax, window: gatherWindow, timeout: groupTimeout}
}

// Run writes what is queued with writers statements in flight at most,
// until ctx ends.
func (g *GroupWriter) Run(ctx context.Context, writers int) {
	done := make(chan struct{})
	for range writers {
		go func() {
			defer func() { done <- struct{}{} }()
			g.write(ctx)
		}()
	}
	for range writers {
		<-done
	}
}

// Unwritten reports whether err certainly left nothing in the database:
// the batch was given up before a statement took it, or the statement
// never reached Postgres (no connection, nothing sent).
func Unwritten(err error) bool {
	var connect *pgconn.ConnectError
	return errors.Is(err, ErrNotWritten) || errors.As(err, &connect) || pgconn.SafeToRetry(err)
}

// Insert writes b with whatever else is waiting, and reports as
// Batch.Insert does. When ctx ends before a statement took b, it returns
// an error wrapping ErrNotWritten; after, one wrapping ErrOutcomeUnknown:
// the caller's deadline holds even when the database does not answer.
func (g *GroupWriter) Insert(ctx context.Context, b Batch) (outboxID int64, inserted bool, err error) {
	it := &groupItem{b: b, done: make(chan groupResult, 1)}
	select {
	case g.queue <- it:
	case <-ctx.Done():
		return 0, false, fmt.Errorf("%w: %w", ErrNotWritten, ctx.Err())
	}
	select {
	case r := <-it.done:
		return r.id, r.inserted, r.err
	case <-ctx.Done():
		if it.state.CompareAndSwap(itemQueued, itemAbandoned) {
			return 0, false, fmt.Errorf("%w: %w", ErrNotWritten, ctx.Err())
		}
		return 0, false, fmt.Errorf("%w: %w", ErrOutcomeUnknown, ctx.Err())
	}
}

// write takes the first waiting item and all others waiting, up to
// the group's bound, and writes them in one statement.
func (g *GroupWriter) write(ctx context.Context) {
	for {
		var items []*groupItem
		select {
		case <-ctx.Done():
			return
		case it := <-g.queue:
			items = g.take(items, it)
		}
		if len(g.queue) == 0 && g.inFlight.Load() > 0 {
			items = g.gather(ctx, items)
		}
	drain:
		for len(items) < g.max {
			select {
			case it := <-g.queue:
				items = g.take(items, it)
			default:
				break drain
			}
		}
		if len(items) > 0 {
			g.insert(items)
		}
	}
}

// gather adds what comes within the window, up to the group's bound.
func (g *GroupWriter) gather(ctx context.Context, items []*groupItem) []*groupItem {
	window := time.NewTimer(g.window)
	defer window.Stop()
	for len(items) < g.max {
		select {
		case it := <-g.queue:
			items = g.take(items, it)
		case <-window.C:
			return items
		case <-ctx.Done():
			return items
		}
	}
	return items
}

// take adds it unless its caller gave up on it.
func (g *GroupWriter) take(items []*groupItem, it *groupItem) []*groupItem {
	if it.state.CompareAndSwap(itemQueued, itemTaken) {
		return append(items, it)
	}
	return items
}

// insert writes items in one statement. Two deliveries of one
// interaction in the same group are one write: the later is a replay.
func (g *GroupWriter) insert(items []*groupItem) {
	ctx, cancel := context.WithTimeout(context.Background(), g.timeout)
	defer cancel()
	first := map[string]*groupItem{}
	var keys, events, tokens []string
	var jobs [][]outboxJob
	for _, it := range items {
		k := it.b.entry.Key.String()
		if first[k] != nil {
			continue
		}
		first[k] = it
		keys, events, tokens = append(keys, k), append(events, it.b.entry.Key.Event), append(tokens, it.b.entry.Token)
		jobs = append(jobs, it.b.jobs)
	}
	ids := map[string]int64{}
	// In flight until its rows are read, not until its callers are
	// answered: a caller answered sends its next batch at once, and a
	// writer that took it for this statement's would wait the window.
	g.inFlight.Add(1)
	rows, err := g.db.Query(ctx, `WITH input AS (
			SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::jsonb[]) AS t(idempotency_key, event_id, token, jobs)),
		recorded AS (
			INSERT INTO interaction_ledger (idempotency_key, event_id, token)
			SELECT idempotency_key, event_id, NULLIF(token, '') FROM input
			ON CONFLICT DO NOTHING RETURNING idempotency_key)
		INSERT INTO interaction_outbox (idempotency_key, interaction_id, release_at, jobs)
		SELECT i.idempotency_key, i.event_id, now() + make_interval(secs => $5), i.jobs
		FROM input i JOIN recorded USING (idempotency_key)
		RETURNING idempotency_key, id`, keys, events, tokens, jobs, Hold.Seconds())
	if err == nil {
		for rows.Next() {
			var k string
			var id int64
			if err = rows.Scan(&k, &id); err != nil {
				break
			}
			ids[k] = id
		}
		rows.Close()
		if err == nil {
			err = rows.Err()
		}
	}
	g.inFlight.Add(-1)
	for _, it := range items {
		k := it.b.entry.Key.String()
		switch {
		case err != nil:
			it.done <- groupResult{err: fmt.Errorf("outbox: enqueue %s: %w", k, err)}
		case first[k] != it:
			it.done <- groupResult{}
		default:
			id, ok := ids[k]
			it.done <- groupResult{id: id, inserted: ok}
		}
	}
}
