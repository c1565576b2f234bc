package cluster

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/herald-bot/herald/internal/discord/transport"
)

// Buckets is this process's side of the bucket leases (herald_buckets), a
// transport.Coordinator: a Discord rate-limit bucket is sent on by one
// process at a time, the one holding its lease, so processes on one token
// never race inside a bucket. A held bucket is answered from memory — the
// hot path makes no database round trip — and its lease is renewed in the
// background while it is used. Claims of buckets not held are batched
// into one query; a bucket whose queue emptied is let go after Linger,
// with the state Discord last reported, which the next holder starts
// from. A dead process's buckets return when their leases expire.
type Buckets struct {
	c *Cluster
	o BucketOptions

	mu     sync.Mutex
	held   map[string]*held
	asking map[string][]func() // claims for the next query, with their wakers
	// waiting are buckets held elsewhere, not to be asked for again
	// before until unless their holder lets them go (LISTEN
	// herald_buckets_released); wakes are the engine's workers to wake.
	waiting map[string]*waiting
	// freed are buckets let go by their holder while this process was
	// not waiting for them, in case a claim of theirs was under way.
	freed  map[string]time.Time
	hashes map[string]string // learned here, to be written
	kick   chan struct{}
	// wanted wakes the loop to hand on what others want: one of them
	// asked for a bucket this one holds (LISTEN herald_buckets_wanted),
	// or a wanted bucket's window was spent (offer).
	wanted chan struct{}
	// Loans of global slots (loans.go): who asked and who lends, as
	// heard, by process; the loop's own ask and loan.
	askers  map[string]asker
	lenders map[string]time.Time
	asked   time.Time
	given   *given

	stats bucketCounters
}

// BucketOptions tune the leases. The zero value of each means its default.
type BucketOptions struct {
	// Lease is how long a bucket stays its holder's without renewal: how
	// long a dead process's buckets wait (default 2 s). Renewals go out
	// every quarter of it.
	Lease time.Duration
	// Linger keeps an idle bucket held this long in case it is used again
	// (default 250 ms), unless another process asks for it: then it goes
	// when idle, when its window is spent, or when it waited Poll for a
	// global slot. Poll is how often leases are looked over (default
	// 50 ms), and how soon a claim whose answer was lost is asked again.
	Linger, Poll time.Duration
	// OnHashes hears the bucket hashes every process learned, at start
	// and every HashEvery (default 1 s): transport.Engine.SeedHashes.
	// A hash learned here is written at the next turn of the loop.
	OnHashes  func(map[string]string)
	HashEvery time.Duration
	// Share, when set, moves global slots between processes (loans.go):
	// a loan runs LoanTerm (default 1 s) unless extended, and a short
	// process asks again every half of it.
	Share    GlobalShare
	LoanTerm time.Duration
}

type waiting struct {
	until time.Time
	wakes []func()
}

type held struct {
	until  time.Time // local clock; the lease in Postgres ends no sooner
	state  transport.BucketState
	idle   time.Time // when the queue emptied; zero while in use
	handed *transport.BucketState
	// releasing is set while a release that may take the bucket away is
	// in flight: claims wait for its outcome (waiters) instead of sending.
	releasing bool
	waiters   []func()
	// wanted is set when another process asked for the bucket while it
	// was in use here: it goes at the end of its window (spent), or when
	// it waited Poll for a slot of this process's share of the global
	// limit (starved), so processes take turns and each uses its share.
	// One that this process keeps busy otherwise stays: handing it on
	// between requests would cost a query and a wait each time.
	wanted  bool
	heard   time.Time // the latest notice that another process wants it
	starved time.Time
	// fresh is set from the claim won until the engine reports on the
	// bucket or says it is done with it: until then it is handed on only
	// if it starves, or a bucket handed over with its window spent (or
	// idle since the claim, as every won bucket is) would go on at once
	// to the next in line without a request sent.
	fresh bool
	// wake is the engine's, from its latest claim: woken when another
	// process asks for the bucket, the worker waiting for a global slot
	// learns from its next claim that the bucket is wanted, which counts
	// in its turn for a slot (transport's schedule.go).
	wake func()
}

// spent reports whether a held bucket's window is used up: nothing more
// can go until it resets, the moment to hand it to a process that wants
// it, with nothing in flight.
func (h *held) spent(now time.Time) bool {
	return h.state.Limit > 0 && h.state.Remaining <= 0 && now.Before(h.state.ResetAt)
}

type bucketCounters struct {
	memory, won, lost, released, renewed, queries atomic.Int64
}

// BucketStats count what the leases cost, for the admin server and
// `herald bench scale`: claims answered from memory (the hot path), claims
// won or lost in Postgres, leases released and renewed, and the queries
// all of that took.
type BucketStats struct {
	Memory   int64 `json:"claims_from_memory"`
	Won      int64 `json:"claims_won"`
	Lost     int64 `json:"claims_lost"`
	Released int64 `json:"released"`
	Renewed  int64 `json:"renewed"`
	Queries  int64 `json:"queries"`
	Held     int   `json:"held"`
}

// Buckets makes this process's bucket coordinator; Run serves it.
func (c *Cluster) Buckets(o BucketOptions) *Buckets {
	if o.Lease <= 0 {
		o.Lease = 2 * time.Second
	}
	if o.Linger <= 0 {
		o.Linger = 250 * time.Millisecond
	}
	if o.Poll <= 0 {
		o.Poll = 50 * time.Millisecond
	}
	if o.HashEvery <= 0 {
		o.HashEvery = time.Second
	}
	if o.LoanTerm <= 0 {
		o.LoanTerm = time.Second
	}
	return &Buckets{c: c, o: o, held: map[string]*held{}, asking: map[string][]func(){},
		waiting: map[string]*waiting{}, freed: map[string]time.Time{}, hashes: map[string]string{}, kick: make(chan struct{}, 1), wanted: make(chan struct{}, 1),
		askers: map[string]asker{}, lenders: map[string]time.Time{}}
}

// Claim implements transport.Coordinator.
func (b *Buckets) Claim(key string, wake func()) transport.Claim {
	now := time.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	if h := b.held[key]; h != nil && h.releasing {
		h.waiters = append(h.waiters, wake)
		return transport.Claim{Wait: b.o.Lease, Asking: true}
	}
	if h := b.held[key]; h != nil && now.Before(h.until) {
		b.stats.memory.Add(1)
		h.idle, h.starved, h.wake = time.Time{}, time.Time{}, wake
		c := transport.Claim{Held: true, Handed: h.handed, Wanted: h.wanted}
		h.handed = nil
		return c
	}
	delete(b.held, key)
	if w := b.waiting[key]; w != nil && now.Before(w.until) {
		w.wakes = append(w.wakes, wake)
		return transport.Claim{Wait: w.until.Sub(now)}
	}
	delete(b.waiting, key)
	b.asking[key] = append(b.asking[key], wake)
	select {
	case b.kick <- struct{}{}:
	default:
	}
	// wake comes with the answer; the wait only bounds a lost wake-up.
	return transport.Claim{Wait: b.o.Lease, Asking: true}
}

// Report implements transport.Coordinator.
func (b *Buckets) Report(key string, s transport.BucketState) {
	b.mu.Lock()
	h := b.held[key]
	if h != nil {
		h.state, h.fresh = s, false
	}
	turn := h != nil && h.wanted && !h.releasing && h.spent(time.Now())
	b.mu.Unlock()
	if turn {
		b.offer()
	}
}

// Starved implements transport.Coordinator.
func (b *Buckets) Starved(key string) {
	b.mu.Lock()
	if h := b.held[key]; h != nil && h.starved.IsZero() {
		h.starved = time.Now()
	}
	b.mu.Unlock()
}

// offer makes the loop look for buckets to hand to those who want them.
func (b *Buckets) offer() {
	select {
	case b.wanted <- struct{}{}:
	default:
	}
}

// Idle implements transport.Coordinator.
func (b *Buckets) Idle(key string, s transport.BucketState) {
	b.mu.Lock()
	if h := b.held[key]; h != nil {
		h.state, h.idle, h.fresh = s, time.Now(), false
	}
	b.mu.Unlock()
}

// Learned implements transport.Coordinator.
func (b *Buckets) Learned(route, hash string) {
	b.mu.Lock()
	b.hashes[route] = hash
	b.mu.Unlock()
}

// Stats reports what the leases cost so far.
func (b *Buckets) Stats() BucketStats {
	b.mu.Lock()
	n := len(b.held)
	b.mu.Unlock()
	s := &b.stats
	return BucketStats{Memory: s.memory.Load(), Won: s.won.Load(), Lost: s.lost.Load(), Released: s.released.Load(),
		Renewed: s.renewed.Load(), Queries: s.queries.Load(), Held: n}
}

// Run answers claims, renews and releases leases and shares hashes until
// ctx ends; then it releases every lease, so the others need not wait
// for them to expire.
func (b *Buckets) Run(ctx context.Context) {
	tick := time.NewTicker(b.o.Poll)
	defer tick.Stop()
	go b.listen(ctx)
	// The hashes others learned, before the first claim: it then names
	// the buckets as they do, on a connection already open.
	hashed := time.Now()
	b.shareHashes(ctx)
	var renewed time.Time
	for {
		select {
		case <-ctx.Done():
			stop, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
			defer cancel()
			b.release(stop, true)
			return
		case <-b.kick:
		case <-b.wanted:
		case <-tick.C:
		}
		b.ask(ctx)
		b.release(ctx, false)
		b.loans(ctx)
		if time.Since(renewed) >= b.o.Lease/4 {
			renewed = time.Now()
			b.renew(ctx)
		}
		if b.learnedAny() || time.Since(hashed) >= b.o.HashEvery {
			hashed = time.Now()
			b.shareHashes(ctx)
		}
	}
}

// query runs one statement of the leases, bounded so a Postgres that
// stopped answering holds the loop no longer than a lease.
func (b *Buckets) query(ctx context.Context, sql string, args ...any) (pgx.Rows, context.CancelFunc, error) {
	b.stats.queries.Add(1)
	qctx, cancel := context.WithTimeout(ctx, b.o.Lease)
	rows, err := b.c.o.DB.Query(qctx, sql, args...)
	if err != nil {
		cancel()
		return nil, nil, err
	}
	return rows, cancel, nil
}

// ask claims every bucket asked for since the last query, in one query,
// and wakes the engine's waiting workers with the answers.
func (b *Buckets) ask(ctx context.Context) {
	b.mu.Lock()
	for k, t := range b.freed {
		if time.Since(t) > b.o.Lease {
			delete(b.freed, k)
		}
	}
	asking := b.asking
	b.asking = map[string][]func(){}
	b.mu.Unlock()
	if len(asking) == 0 {
		return
	}
	keys := make([]string, 0, len(asking))
	for k := range asking {
		keys = append(keys, k)
	}
	slices.Sort(keys) // the order the rows are locked in (see inKeyOrder)
	began := time.Now()
	won, lost, err := b.claim(ctx, keys)
	if err != nil && ctx.Err() == nil {
		b.c.o.Logger.WarnContext(ctx, "cluster: could not claim Discord buckets; their requests wait", "err", err)
	}
	b.mu.Lock()
	for _, k := range keys {
		if g, ok := won[k]; ok {
			// Idle until the engine comes back for it, so a claim whose
			// request went meanwhile (cancelled, timed out) is let go.
			h := &held{until: began.Add(b.o.Lease), state: g.state, idle: time.Now(), wanted: g.wanted, fresh: true}
			if g.state.Limit > 0 {
				h.handed = &g.state
			}
			b.held[k] = h
			continue
		}
		// Held elsewhere: ask again when its holder lets it go (released
		// wakes the waiters), or when its lease ends, in case that news
		// was missed. Asking again every Linger instead cost 9.3 queries
		// a request with three processes over a 100 s burst, most of
		// them lost claims. One let go during the query, or taken by
		// another meanwhile, is asked for again soon.
		wait, ok := lost[k]
		switch {
		case !b.freed[k].Before(began):
			wait = 0
		case !ok:
			wait = b.o.Poll
		}
		b.waiting[k] = &waiting{until: time.Now().Add(wait)}
	}
	b.mu.Unlock()
	b.stats.won.Add(int64(len(won)))
	b.stats.lost.Add(int64(len(keys) - len(won)))
	for _, wakes := range asking {
		for _, wake := range wakes {
			wake()
		}
	}
}

// grant is a lease won: the state its last holder left, and whether
// other processes wait for it.
type grant struct {
	state  transport.BucketState
	wanted bool
}

// claim takes the leases of keys that are free, expired, already this
// process's or handed to it. It returns what each won lease carries and,
// for the others, how long their holder's lease still runs. A key missing
// from both was claimed by another process during the query.
func (b *Buckets) claim(ctx context.Context, keys []string) (map[string]grant, map[string]time.Duration, error) {
	// The last SELECT reads the table as it was before the INSERT: the
	// leases of the keys that were not won.
	rows, cancel, err := b.query(ctx, `WITH won AS (
			INSERT INTO herald_buckets AS b (key, owner, lease_until)
			SELECT k, $2, now() + make_interval(secs => $3) FROM unnest($1::text[]) k ORDER BY k
			ON CONFLICT (key) DO UPDATE SET owner = excluded.owner, lease_until = excluded.lease_until, wanters = array_remove(b.wanters, excluded.owner)
				WHERE b.owner = excluded.owner OR b.lease_until < now()
			RETURNING b.key, b.lim, b.remaining, b.reset_at, cardinality(b.wanters) > 0 AS wanted)
		SELECT key, true, lim, remaining, reset_at, wanted, 0::float8 FROM won
		UNION ALL
		SELECT b.key, false, 0, 0, 'epoch'::timestamptz, false, extract(epoch FROM b.lease_until - now())::float8
		FROM herald_buckets b WHERE b.key = ANY($1) AND b.key NOT IN (SELECT key FROM won)`,
		keys, b.c.id, b.o.Lease.Seconds())
	if err != nil {
		return nil, nil, fmt.Errorf("cluster: claim buckets: %w", err)
	}
	defer cancel()
	won := map[string]grant{}
	lost := map[string]time.Duration{}
	var key string
	var ok, wanted bool
	var s transport.BucketState
	var left float64
	_, err = pgx.ForEachRow(rows, []any{&key, &ok, &s.Limit, &s.Remaining, &s.ResetAt, &wanted, &left}, func() error {
		if ok {
			won[key] = grant{state: s, wanted: wanted}
		} else {
			lost[key] = max(time.Duration(left*float64(time.Second)), 0)
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("cluster: claim buckets: %w", err)
	}
	if len(lost) > 0 {
		// Their holders hear of it and let them go once idle, instead
		// of after Linger, to the first that asked. Each ask notifies,
		// though the asker is listed once: a notice is lost when it
		// comes before its holder listens or notes its claim, and a
		// waiter asks again only when the holder's lease would end.
		wanted := make([]string, 0, len(lost))
		for k := range lost {
			wanted = append(wanted, k)
		}
		slices.Sort(wanted)
		b.stats.queries.Add(1)
		if _, err := b.c.o.DB.Exec(ctx, `WITH w AS (UPDATE herald_buckets b
				SET wanters = CASE WHEN $1 = ANY(b.wanters) THEN b.wanters ELSE b.wanters || $1::text END FROM (`+inKeyOrder+`) l
				WHERE b.key = l.key AND b.owner <> $1 RETURNING b.owner, b.key)
			SELECT pg_notify('herald_buckets_wanted', owner || ' ' || key) FROM w`, b.c.id, wanted); err != nil {
			return won, lost, fmt.Errorf("cluster: ask for buckets: %w", err)
		}
	}
	return won, lost, nil
}

// released wakes the engine's workers waiting for a bucket its holder
// just let go, to claim it now rather than at their next poll.
func (b *Buckets) released(key string) {
	b.mu.Lock()
	w := b.waiting[key]
	delete(b.waiting, key)
	if w == nil {
		// A claim may be under way that will find it held: it must not
		// wait for the lease.
		b.freed[key] = time.Now()
	}
	b.mu.Unlock()
	if w != nil {
		for _, wake := range w.wakes {
			wake()
		}
	}
}

// want hears that another process asked for a bucket this one holds: an
// idle one goes now, one in use when its window is spent or it starves.
func (b *Buckets) want(key string) {
	var wake func()
	b.mu.Lock()
	if h := b.held[key]; h != nil {
		if !h.wanted {
			wake = h.wake
		}
		h.wanted, h.heard = true, time.Now()
	}
	b.mu.Unlock()
	if wake != nil {
		wake()
	}
	b.offer()
}

// listen hears the processes asking for buckets this one holds, the
// buckets let go that this one waits for, and the asks and loans of
// global slots (loans.go), on a connection of its own, until ctx ends; a
// lost connection is opened again. Without it, an idle bucket goes back
// after Linger, a bucket waited for is asked for again when its holder's
// lease ends, and no slots are lent or borrowed.
func (b *Buckets) listen(ctx context.Context) {
	for ctx.Err() == nil {
		err := func() error {
			pooled, err := b.c.o.DB.Acquire(ctx)
			if err != nil {
				return err
			}
			// A connection that listens is never handed to anyone else.
			conn := pooled.Hijack()
			defer conn.Close(context.WithoutCancel(ctx))
			if _, err := conn.Exec(ctx, `LISTEN herald_buckets_wanted; LISTEN herald_buckets_released; LISTEN `+loansChannel); err != nil {
				return err
			}
			for {
				n, err := conn.WaitForNotification(ctx)
				if err != nil {
					return err
				}
				switch owner, key, _ := strings.Cut(n.Payload, " "); {
				case n.Channel == loansChannel:
					b.heardLoans(n.Payload)
				case n.Channel == "herald_buckets_released":
					b.released(n.Payload)
				case owner == b.c.id:
					b.want(key)
				}
			}
		}()
		if ctx.Err() == nil {
			b.c.o.Logger.WarnContext(ctx, "cluster: not hearing other processes; idle buckets go back after the linger, waited-for ones at their lease's end, and no global slots are lent", "err", err)
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}
}

// release lets go of the buckets idle for Linger (all of them when all is
// set) and of those another process asked for that are idle, spent or
// starved, leaving their state for the next holder: the first live
// process that asked for it, which holds it for a Poll — time to claim
// it — before anyone may take it. A bucket that
// may go is marked releasing meanwhile, so the engine cannot send on it
// from memory while another process may already have taken it.
func (b *Buckets) release(ctx context.Context, all bool) {
	now := time.Now()
	b.mu.Lock()
	var keys []string
	var force []bool
	var states []transport.BucketState
	for _, k := range b.heldKeys() {
		h := b.held[k]
		old := all || !now.Before(h.until) || (!h.idle.IsZero() && now.Sub(h.idle) >= b.o.Linger)
		starved := !h.starved.IsZero() && now.Sub(h.starved) >= b.o.Poll
		handOn := h.wanted && (starved || !h.fresh && (!h.idle.IsZero() || h.spent(now)))
		if old || handOn {
			keys = append(keys, k)
			force = append(force, old)
			states = append(states, h.state)
			h.releasing = true
		}
	}
	b.mu.Unlock()
	if len(keys) == 0 {
		return
	}
	// Every bucket let go is announced, so the process it went to (or,
	// with none waiting, any) claims it at once. The rows are locked in
	// key order, as inKeyOrder does.
	rows, cancel, err := b.query(ctx, `WITH l AS (
			SELECT b.key, (SELECT u.w FROM unnest(b.wanters) WITH ORDINALITY u(w, i)
					JOIN herald_processes p ON p.id = u.w AND p.lease_until > now() ORDER BY u.i LIMIT 1) AS next
			FROM herald_buckets b WHERE b.key = ANY($2) ORDER BY b.key FOR UPDATE OF b),
		r AS (
			UPDATE herald_buckets b SET owner = coalesce(l.next, b.owner),
				lease_until = CASE WHEN l.next IS NULL THEN now() ELSE now() + make_interval(secs => $7) END,
				wanters = CASE WHEN l.next IS NULL THEN '{}' ELSE array_remove(b.wanters, l.next) END,
				lim = s.lim, remaining = s.remaining, reset_at = s.reset_at
			FROM (SELECT * FROM unnest($2::text[], $3::int[], $4::int[], $5::timestamptz[], $6::bool[]) AS s(key, lim, remaining, reset_at, force)) s, l
			WHERE b.key = s.key AND b.key = l.key AND b.owner = $1 AND (s.force OR cardinality(b.wanters) > 0) RETURNING b.key),
		n AS (SELECT pg_notify('herald_buckets_released', key) FROM r)
		SELECT key FROM r WHERE (SELECT count(*) FROM n) >= 0`, append(append(append([]any{b.c.id, keys}, columns(states)...), force), b.o.Poll.Seconds())...)
	var released []string
	if err == nil {
		defer cancel()
		released, err = pgx.CollectRows(rows, pgx.RowTo[string])
	}
	if err != nil && ctx.Err() == nil {
		b.c.o.Logger.WarnContext(ctx, "cluster: could not release Discord buckets; they return when their leases expire", "err", err)
	}
	b.stats.released.Add(int64(len(released)))
	gone := map[string]bool{}
	for _, k := range released {
		gone[k] = true
	}
	var wakes []func()
	b.mu.Lock()
	for i, k := range keys {
		h := b.held[k]
		if h == nil {
			continue
		}
		wakes = append(wakes, h.waiters...)
		h.waiters, h.releasing = nil, false
		// A forced release that failed is dropped too: its lease lapses.
		// One kept although the query ran was no longer wanted, unless
		// a notice came meanwhile; after an error it still is, and the
		// next look offers it again.
		switch {
		case gone[k] || force[i]:
			delete(b.held, k)
		case err == nil && h.heard.Before(now):
			h.wanted = false
		}
	}
	b.mu.Unlock()
	for _, wake := range wakes {
		wake()
	}
}

// renew extends the leases of the buckets held, with their latest state;
// one taken by another meanwhile (this process was too slow) is dropped.
func (b *Buckets) renew(ctx context.Context) {
	b.mu.Lock()
	keys := b.heldKeys()
	states := make([]transport.BucketState, 0, len(keys))
	for _, k := range keys {
		states = append(states, b.held[k].state)
	}
	b.mu.Unlock()
	if len(keys) == 0 {
		return
	}
	began := time.Now()
	rows, cancel, err := b.query(ctx, `UPDATE herald_buckets b SET lease_until = now() + make_interval(secs => $6),
			lim = s.lim, remaining = s.remaining, reset_at = s.reset_at
		FROM (SELECT * FROM unnest($2::text[], $3::int[], $4::int[], $5::timestamptz[]) AS s(key, lim, remaining, reset_at)) s,
			(`+inKeyOrder+`) l
		WHERE b.key = s.key AND b.key = l.key AND b.owner = $1 RETURNING b.key`, append(append([]any{b.c.id, keys}, columns(states)...), b.o.Lease.Seconds())...)
	if err != nil {
		if ctx.Err() == nil {
			b.c.o.Logger.WarnContext(ctx, "cluster: could not renew Discord bucket leases; they lapse", "err", err)
		}
		return
	}
	defer cancel()
	kept, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return
	}
	b.stats.renewed.Add(int64(len(kept)))
	b.mu.Lock()
	defer b.mu.Unlock()
	keep := map[string]bool{}
	for _, k := range kept {
		keep[k] = true
	}
	for _, k := range keys {
		h := b.held[k]
		switch {
		case h == nil:
		case keep[k]:
			h.until = began.Add(b.o.Lease)
		default:
			delete(b.held, k)
		}
	}
}

func (b *Buckets) learnedAny() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.hashes) > 0
}

// shareHashes writes the hashes learned here and reads everyone's; it
// also forgets leases nobody renewed for a while.
func (b *Buckets) shareHashes(ctx context.Context) {
	b.mu.Lock()
	learned := b.hashes
	b.hashes = map[string]string{}
	b.mu.Unlock()
	routes := make([]string, 0, len(learned))
	hashes := make([]string, 0, len(learned))
	for r, h := range learned {
		routes, hashes = append(routes, r), append(hashes, h)
	}
	err := pgx.BeginFunc(ctx, b.c.o.DB, func(tx pgx.Tx) error {
		if len(routes) > 0 {
			if _, err := tx.Exec(ctx, `INSERT INTO herald_bucket_hashes (route, hash) SELECT * FROM unnest($1::text[], $2::text[])
				ON CONFLICT (route) DO UPDATE SET hash = excluded.hash, learned_at = now()`, routes, hashes); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, `DELETE FROM herald_buckets WHERE lease_until < now() - interval '10 minutes'`); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT route, hash FROM herald_bucket_hashes`)
		if err != nil {
			return err
		}
		all := map[string]string{}
		var r, h string
		if _, err := pgx.ForEachRow(rows, []any{&r, &h}, func() error { all[r] = h; return nil }); err != nil {
			return err
		}
		if b.o.OnHashes != nil {
			b.o.OnHashes(all)
		}
		return nil
	})
	b.stats.queries.Add(1)
	if err != nil && ctx.Err() == nil {
		b.mu.Lock()
		for r, h := range learned { // try again next time
			if _, ok := b.hashes[r]; !ok {
				b.hashes[r] = h
			}
		}
		b.mu.Unlock()
		b.c.o.Logger.WarnContext(ctx, "cluster: could not share bucket hashes", "err", err)
	}
}

// Every statement that takes several leases locks their rows in key
// order, so two processes taking overlapping sets never deadlock (which
// Postgres resolves only after deadlock_timeout, a second in which the
// losing process's leases lapse). inKeyOrder locks the rows named by $2.
const inKeyOrder = `SELECT key FROM herald_buckets WHERE key = ANY($2) ORDER BY key FOR UPDATE`

// heldKeys lists the buckets held, in key order. The lock is held.
func (b *Buckets) heldKeys() []string {
	keys := make([]string, 0, len(b.held))
	for k := range b.held {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// columns turns states into the arrays the statements unnest.
func columns(states []transport.BucketState) []any {
	lims := make([]int32, len(states))
	rem := make([]int32, len(states))
	resets := make([]time.Time, len(states))
	for i, s := range states {
		lims[i], rem[i], resets[i] = int32(s.Limit), int32(s.Remaining), s.ResetAt
	}
	return []any{lims, rem, resets}
}
