package cluster

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/herald-bot/herald/internal/discord/transport"
	"github.com/herald-bot/herald/internal/store/storetest"
)

// leases starts a member's bucket coordinator on db; stopping ctx lets
// go of what it holds.
func leases(t *testing.T, ctx context.Context, db *pgxpool.Pool, host string) *Buckets {
	t.Helper()
	c, err := Join(t.Context(), Options{DB: db, Logger: slog.New(slog.DiscardHandler), Host: host})
	if err != nil {
		t.Fatal(err)
	}
	b := c.Buckets(BucketOptions{Lease: 600 * time.Millisecond, Linger: 50 * time.Millisecond, Poll: 20 * time.Millisecond})
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
	for deadline := time.Now().Add(5 * time.Second); b.Stats().Lost == 0; {
		if time.Now().After(deadline) {
			t.Fatal("b's claim of k was never answered")
		}
		time.Sleep(5 * time.Millisecond)
	}
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
	dead := leases(t, t.Context(), deadDB, "dead")
	claimWithin(t, dead, "d", 5*time.Second)
	deadDB.Close() // it can neither renew nor release
	start := time.Now()
	claimWithin(t, survivor, "d", 5*time.Second)
	if took := time.Since(start); took < 300*time.Millisecond {
		t.Errorf("a dead member's bucket moved after %s, before its lease could expire", took)
	}

	ctx, stop := context.WithCancel(t.Context())
	stopping := leases(t, ctx, db, "stopping")
	claimWithin(t, stopping, "s", 5*time.Second)
	stop()
	start = time.Now()
	claimWithin(t, survivor, "s", 5*time.Second)
	if took := time.Since(start); took > 500*time.Millisecond {
		t.Errorf("a stopped member's bucket moved after %s, want at once", took)
	}
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
