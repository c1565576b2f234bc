package cluster

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/herald-bot/herald/internal/discord/transport"
	"github.com/herald-bot/herald/internal/store/storetest"
	"github.com/herald-bot/herald/internal/testsupport/wait"
)

// leases starts a member's bucket coordinator on db; stopping ctx lets
// go of what it holds. Its leases last 3 s: a member renews them from a
// loop of statements, and on a loaded machine (a clean-clone .ci/run) a
// slow Postgres held the renewal of 600 ms ones past their end, so the
// other member took a bucket the test meant its holder to keep. A test
// that needs a lease to lapse asks for a short one (leasesFor).
func leases(t *testing.T, ctx context.Context, db *pgxpool.Pool, host string) *Buckets {
	t.Helper()
	return leasesFor(t, ctx, db, host, 3*time.Second)
}

// leasesFor is leases with leases of their own length.
func leasesFor(t *testing.T, ctx context.Context, db *pgxpool.Pool, host string, lease time.Duration) *Buckets {
	t.Helper()
	c, err := Join(t.Context(), Options{DB: db, Logger: slog.New(slog.DiscardHandler), Host: host})
	if err != nil {
		t.Fatal(err)
	}
	b := c.Buckets(BucketOptions{Lease: lease, Linger: 50 * time.Millisecond, Poll: 20 * time.Millisecond})
	done := make(chan struct{})
	go func() { b.Run(ctx); close(done) }()
	t.Cleanup(func() { <-done })
	return b
}

// claimWithin claims key the way the engine does — asking again after
// each wake-up or wait — and reports the claim that held it, or fails.
func claimWithin(t *testing.T, b *Buckets, key string, within time.Duration) transport.Claim {
	t.Helper()
	deadline := time.Now().Add(within)
	wake := make(chan struct{}, 1)
	for time.Now().Before(deadline) {
		c := b.Claim(key, func() {
			select {
			case wake <- struct{}{}:
			default:
			}
		})
		if c.Held {
			return c
		}
		select {
		case <-wake:
		case <-time.After(min(c.Wait, time.Until(deadline))):
		}
	}
	t.Fatalf("%s not held within %s", key, within)
	return transport.Claim{}
}

// One holder at a time: a bucket held by one member is refused to the
// other until the holder goes idle; then it moves with the state the
// holder left, and while held it is answered from memory.
func TestBucketLeaseMovesWithItsState(t *testing.T) {
	t.Parallel()
	db := storetest.Pool(t)
	a := leases(t, t.Context(), db, "a")
	b := leases(t, t.Context(), db, "b")

	claimWithin(t, a, "k", 5*time.Second)
	queries := a.Stats().Queries
	for range 100 {
		if !a.Claim("k", func() {}).Held {
			t.Fatal("a lost k while using it")
		}
	}
	if s := a.Stats(); s.Memory < 100 {
		t.Errorf("claims of a held bucket from memory: %d of 100", s.Memory)
	}
	if got := a.Stats().Queries - queries; got > 1 {
		// The only query allowed meanwhile is a renewal.
		t.Errorf("100 claims of a held bucket took %d queries", got)
	}
	if c := b.Claim("k", func() {}); c.Held {
		t.Fatal("b holds k while a does")
	}
	wait.Within(t, 5*time.Second, "b's claim of k to be answered", func() bool { return b.Stats().Lost > 0 })
	if c := b.Claim("k", func() {}); c.Held {
		t.Fatal("b took k from a while a used it")
	}

	left := transport.BucketState{Limit: 5, Remaining: 0, ResetAt: time.Now().Add(time.Second).Truncate(time.Microsecond)}
	a.Idle("k", left)
	c := claimWithin(t, b, "k", 5*time.Second)
	if c.Handed == nil || c.Handed.Limit != 5 || c.Handed.Remaining != 0 || !c.Handed.ResetAt.Equal(left.ResetAt) {
		t.Fatalf("b took k with %+v, want the state a left %+v", c.Handed, left)
	}
	if c := a.Claim("k", func() {}); c.Held {
		t.Fatal("a still holds k after letting it go")
	}
}

// A member that dies holding a bucket loses it when its lease expires;
// one that stops lets go of all it holds at once.
func TestBucketLeasesOfDeadAndStoppedMembers(t *testing.T) {
	t.Parallel()
	url := storetest.URL(t)
	db := pool(t, url)
	survivor := leases(t, t.Context(), db, "survivor")

	deadDB := pool(t, url)
	dead := leasesFor(t, t.Context(), deadDB, "dead", 600*time.Millisecond)
	claimWithin(t, dead, "d", 5*time.Second)
	deadDB.Close() // it can neither renew nor release
	start := time.Now()
	claimWithin(t, survivor, "d", 5*time.Second)
	if took := time.Since(start); took < 300*time.Millisecond {
		t.Errorf("a dead member's bucket moved after %s, before its lease could expire", took)
	}

	// The stopping member's leases last a minute: the survivor gets its
	// bucket within seconds only if it was let go, however loaded the
	// machine.
	ctx, stop := context.WithCancel(t.Context())
	stopping := leasesFor(t, ctx, db, "stopping", time.Minute)
	claimWithin(t, stopping, "s", 5*time.Second)
	stop()
	claimWithin(t, survivor, "s", 20*time.Second)
}

// Hashes learned by one member reach the others.
func TestBucketHashesAreShared(t *testing.T) {
	t.Parallel()
	db := storetest.Pool(t)
	c, err := Join(t.Context(), Options{DB: db, Logger: slog.New(slog.DiscardHandler), Host: "a"})
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan map[string]string, 10)
	a := c.Buckets(BucketOptions{HashEvery: 20 * time.Millisecond})
	b := c.Buckets(BucketOptions{HashEvery: 20 * time.Millisecond, OnHashes: func(m map[string]string) { got <- m }})
	for _, x := range []*Buckets{a, b} {
		done := make(chan struct{})
		go func() { x.Run(t.Context()); close(done) }()
		t.Cleanup(func() { <-done })
	}
	a.Learned("PATCH /channels/{channel_id}/messages/{message_id}", "abc")
	deadline := time.After(5 * time.Second)
	for {
		select {
		case m := <-got:
			if m["PATCH /channels/{channel_id}/messages/{message_id}"] == "abc" {
				return
			}
		case <-deadline:
			t.Fatal("the hash a learned never reached b")
		}
	}
}

// A bucket in use that another member asks for moves at the end of its
// window (spent), or once it waited a poll for a slot of its holder's
// share of the global limit (starved): members take turns, and each uses
// its share. One whose window has room stays with the member that keeps
// it busy, and goes as soon as that member's queue for it is empty.
func TestWantedBucketTakesTurns(t *testing.T) {
	t.Parallel()
	db := storetest.Pool(t)
	a := leases(t, t.Context(), db, "a")
	b := leases(t, t.Context(), db, "b")
	asked := func(key string) {
		t.Helper()
		claimWithin(t, a, key, 5*time.Second)
		if c := a.Claim(key, func() {}); !c.Held || c.Wanted {
			t.Fatalf("a's claim of %s before b asked: %+v", key, c)
		}
		lost := b.Stats().Lost
		wait.Within(t, 5*time.Second, "a to hear that b wants "+key, func() bool {
			// b asks again when its wait ends, as the engine does: a notice
			// sent before a listened is not the only one.
			b.Claim(key, func() {})
			c := a.Claim(key, func() {})
			if !c.Held {
				t.Fatalf("a lost %s while using it", key)
			}
			return b.Stats().Lost > lost && c.Wanted
		})
	}

	// Spent: the window is used up, so the turn ends without waiting for
	// its reset, 15 s away.
	asked("spent")
	left := transport.BucketState{Limit: 5, Remaining: 0, ResetAt: time.Now().Add(15 * time.Second).Truncate(time.Microsecond)}
	a.Report("spent", left)
	c := claimWithin(t, b, "spent", 10*time.Second)
	if c.Handed == nil || c.Handed.Remaining != 0 || !c.Handed.ResetAt.Equal(left.ResetAt) {
		t.Fatalf("b took the spent bucket with %+v, want %+v", c.Handed, left)
	}

	// Starved: a's next request waits for a global slot; a poll on, it
	// goes, unless a came back for it (a slot was granted) meanwhile.
	asked("starved")
	a.Starved("starved")
	a.Claim("starved", func() {}) // granted at once: a sends again
	a.Starved("starved")
	c = claimWithin(t, b, "starved", wait.Timeout)
	if c := a.Claim("starved", func() {}); c.Held {
		t.Fatal("a and b both hold the starved bucket")
	}

	// Room left: kept while in use, however long b waits; idle, it goes.
	// a's loop looks at what to hand on every turn, and renews what it
	// kept every few turns: three renewals seen (each a change of
	// Renewed) span two renewal periods of looks, however slow the
	// machine.
	asked("busy")
	a.Report("busy", transport.BucketState{Limit: 5, Remaining: 3, ResetAt: time.Now().Add(2 * time.Second)})
	renewed, renewals := a.Stats().Renewed, 0
	wait.Until(t, "a to look over its leases for two renewal periods", func() bool {
		if c := a.Claim("busy", func() {}); !c.Held {
			t.Fatal("a lost a bucket with room left while using it")
		}
		if r := a.Stats().Renewed; r != renewed {
			renewed, renewals = r, renewals+1
		}
		return renewals >= 3
	})
	a.Idle("busy", transport.BucketState{Limit: 5, Remaining: 2, ResetAt: time.Now().Add(2 * time.Second)})
	claimWithin(t, b, "busy", wait.Timeout)
	if c := a.Claim("busy", func() {}); c.Held {
		t.Fatal("a and b both hold busy")
	}
}

// A claim of several buckets locks their rows in key order, as every
// statement on several leases does, so members taking overlapping sets
// never deadlock (Postgres breaks one only after deadlock_timeout, a
// second in which the loser's leases lapse): while the claim waits for
// k05, k09 — later in key order, earlier in the claim — is not locked.
func TestClaimsLockInKeyOrder(t *testing.T) {
	t.Parallel()
	db := storetest.Pool(t)
	if _, err := db.Exec(t.Context(), `INSERT INTO herald_buckets (key, owner, lease_until)
		SELECT k, 'gone', now() - interval '1 minute' FROM unnest(array['k01', 'k05', 'k09']) k`); err != nil {
		t.Fatal(err)
	}
	blocker, err := db.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer blocker.Rollback(context.Background())
	if _, err := blocker.Exec(t.Context(), `SELECT FROM herald_buckets WHERE key = 'k05' FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	// Leases of a minute: a statement lasts at most a lease, and the claim
	// must still be waiting for k05 when the test looks.
	b := leasesFor(t, t.Context(), db, "a", time.Minute)
	for _, k := range []string{"k09", "k01", "k05"} {
		b.Claim(k, func() {})
	}
	wait.Within(t, 5*time.Second, "the claim to wait for k05", func() bool {
		var waiting bool
		if err := db.QueryRow(t.Context(), `SELECT EXISTS (SELECT FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock')`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		return waiting
	})
	probe, err := db.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer probe.Rollback(context.Background())
	if _, err := probe.Exec(t.Context(), `SELECT FROM herald_buckets WHERE key = 'k09' FOR UPDATE NOWAIT`); err != nil {
		t.Fatalf("k09 was locked before k05: %v", err)
	}
	probe.Rollback(t.Context())
	blocker.Commit(t.Context())
	for _, k := range []string{"k01", "k05", "k09"} {
		claimWithin(t, b, k, 5*time.Second)
	}
}

// A bucket let go while others wait goes to the first live one that
// asked, not to whichever claims fastest: a member that asked later, or
// died waiting, does not get it.
func TestReleasedBucketGoesToWhoAskedFirst(t *testing.T) {
	t.Parallel()
	db := storetest.Pool(t)
	a := leases(t, t.Context(), db, "a")
	b := leases(t, t.Context(), db, "b")
	c := leases(t, t.Context(), db, "c")
	claimWithin(t, a, "k", 5*time.Second)
	refused := func(m *Buckets) {
		t.Helper()
		lost := m.Stats().Lost
		m.Claim("k", func() {})
		wait.Within(t, 5*time.Second, "the claim refused", func() bool { return m.Stats().Lost > lost })
	}
	// A dead member asked first; b, then c.
	if _, err := db.Exec(t.Context(), `INSERT INTO herald_processes (id, host, pid, boot, version, lease_until) VALUES ('gone', 'gone', 1, 'x', 'test', now() - interval '1 second');
		UPDATE herald_buckets SET wanters = '{gone}' WHERE key = 'k'`); err != nil {
		t.Fatal(err)
	}
	refused(b)
	refused(c)
	a.Idle("k", transport.BucketState{Limit: 5, Remaining: 3, ResetAt: time.Now().Add(time.Second)})
	var owner string
	wait.Within(t, 5*time.Second, "a to let k go", func() bool {
		if err := db.QueryRow(t.Context(), `SELECT owner FROM herald_buckets WHERE key = 'k'`).Scan(&owner); err != nil {
			t.Fatal(err)
		}
		return owner != a.c.ID()
	})
	if owner != b.c.ID() {
		t.Fatalf("k went to %s, want b (%s), the first live member that asked", owner, b.c.ID())
	}
	if got := claimWithin(t, b, "k", 5*time.Second); !got.Wanted {
		t.Error("b took k without hearing that c waits for it")
	}
}

// The engine's worker waiting for a global slot on a held bucket is woken
// when another member asks for it: its next claim says the bucket is
// wanted, which counts in its turn for a slot (transport's schedule.go).
func TestWantedBucketWakesItsWorker(t *testing.T) {
	t.Parallel()
	db := storetest.Pool(t)
	a := leases(t, t.Context(), db, "a")
	b := leases(t, t.Context(), db, "b")
	claimWithin(t, a, "k", 5*time.Second)
	woken := make(chan struct{}, 1)
	if c := a.Claim("k", func() { woken <- struct{}{} }); !c.Held || c.Wanted {
		t.Fatalf("a's claim before b asked: %+v", c)
	}
	// b asks again whenever its wait ends, as the engine does.
	deadline := time.After(10 * time.Second)
	for asked := true; asked; {
		c := b.Claim("k", func() {})
		if c.Held {
			t.Fatal("b took k: a's lease ran out before b's ask reached it")
		}
		select {
		case <-woken:
			asked = false
		case <-time.After(c.Wait):
		case <-deadline:
			t.Fatal("a's worker was not woken when b asked for its bucket")
		}
	}
	if c := a.Claim("k", func() {}); !c.Held || !c.Wanted {
		t.Fatalf("a's claim after b asked: %+v, want held and wanted", c)
	}
}

// A member listed among a bucket's wanters notifies its holder again each
// time it asks: the first notice is lost when it comes before the holder
// listens, and the waiter would otherwise wait until the holder idles.
func TestAskingAgainNotifiesAgain(t *testing.T) {
	t.Parallel()
	db := storetest.Pool(t)
	conn, err := db.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(t.Context(), `LISTEN herald_buckets_wanted`); err != nil {
		t.Fatal(err)
	}
	a := leases(t, t.Context(), db, "a")
	b := leases(t, t.Context(), db, "b")
	claimWithin(t, a, "k", 5*time.Second)
	want := a.c.ID() + " k"
	for n := range 2 {
		lost := b.Stats().Lost
		b.Claim("k", func() {})
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		for {
			got, err := conn.Conn().WaitForNotification(ctx)
			if err != nil {
				cancel()
				t.Fatalf("notice %d of b's asks: %v", n+1, err)
			}
			if got.Payload == want {
				break
			}
		}
		cancel()
		wait.Within(t, 5*time.Second, "b's claim to be refused", func() bool { return b.Stats().Lost > lost })
		// b's wait ends when a's lease would: a claim before that asks
		// nothing.
		wait.Within(t, 5*time.Second, "b's wait for k to end", func() bool {
			b.mu.Lock()
			defer b.mu.Unlock()
			w := b.waiting["k"]
			return w == nil || !time.Now().Before(w.until)
		})
	}
	var wanters []string
	if err := db.QueryRow(t.Context(), `SELECT wanters FROM herald_buckets WHERE key = 'k'`).Scan(&wanters); err != nil {
		t.Fatal(err)
	}
	if len(wanters) != 1 || wanters[0] != b.c.ID() {
		t.Fatalf("wanters %v, want b listed once", wanters)
	}
}
