package cluster

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/herald-bot/herald/internal/store/storetest"
	"github.com/herald-bot/herald/internal/testsupport/pgtest"
	"github.com/herald-bot/herald/internal/testsupport/wait"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// served records which member serves which shard, and fails the test if
// two ever serve one at once.
type served struct {
	t  *testing.T
	mu sync.Mutex
	by map[int]string
}

func (s *served) serve(member string) ServeFunc {
	return func(ctx context.Context, shard int) error {
		s.mu.Lock()
		if other, ok := s.by[shard]; ok {
			s.t.Errorf("shard %d served by %s and %s at once", shard, other, member)
		}
		s.by[shard] = member
		s.mu.Unlock()
		<-ctx.Done()
		s.mu.Lock()
		delete(s.by, shard)
		s.mu.Unlock()
		return nil
	}
}

// owners is how many shards each member serves, and how many are served.
func (s *served) owners() (map[string]int, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	for _, m := range s.by {
		out[m]++
	}
	return out, len(s.by)
}

// waitFor waits until cond holds of the shards served, and says how long
// that took.
func (s *served) waitFor(what string, cond func(map[string]int, int) bool) time.Duration {
	s.t.Helper()
	start := time.Now()
	wait.WithinShowing(s.t, wait.Timeout, what, func() bool { return cond(s.owners()) }, func() string {
		by, n := s.owners()
		return fmt.Sprintf("%d served, %v", n, by)
	})
	return time.Since(start)
}

type member struct {
	c    *Cluster
	stop context.CancelFunc
	done chan struct{} // closed when Shards returned
	live atomic.Int32  // as OnLive last said
}

func run(t *testing.T, db *pgxpool.Pool, name string, s *served) *member {
	t.Helper()
	m := &member{done: make(chan struct{})}
	c, err := Join(t.Context(), Options{DB: db, Logger: slog.New(slog.DiscardHandler), Lease: 3 * time.Second, Every: 500 * time.Millisecond, Host: name,
		OnLive: func(n, _ int) { m.live.Store(int32(n)) }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(t.Context())
	m.c, m.stop = c, stop
	go func() {
		defer close(m.done)
		if err := c.Shards(ctx, 3, s.serve(name)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}()
	t.Cleanup(func() { stop(); <-m.done })
	return m
}

// Three shards spread over the live members as they come, move at once
// from one that stops, and within the lease from one that dies; no shard
// is ever served twice at once.
func TestShardsSpreadAndMove(t *testing.T) {
	t.Parallel()
	url := storetest.URL(t)
	db := pool(t, url)
	s := &served{t: t, by: map[int]string{}}
	run(t, db, "a", s)
	s.waitFor("a serving all three", func(by map[string]int, n int) bool { return by["a"] == 3 })
	b := run(t, db, "b", s)
	s.waitFor("a and b sharing", func(by map[string]int, n int) bool { return n == 3 && by["a"] == 2 && by["b"] == 1 })
	// c dies: its pool closes, so it can neither renew nor hand over.
	cdb := pool(t, url)
	run(t, cdb, "c", s)
	s.waitFor("one shard each", func(by map[string]int, n int) bool { return n == 3 && by["a"] == 1 && by["b"] == 1 && by["c"] == 1 })
	members, err := Live(t.Context(), db)
	if err != nil || len(members) != 3 {
		t.Fatalf("members %v, %v", members, err)
	}
	s.waitFor("b to hear three live", func(map[string]int, int) bool { return b.live.Load() == 3 })

	b.stop()
	<-b.done
	took := s.waitFor("b's shard taken over", func(by map[string]int, n int) bool { return n == 3 && by["b"] == 0 })
	t.Logf("a graceful stop: its shard served again after %s", took)

	cdb.Close()
	took = s.waitFor("c's shard taken over", func(by map[string]int, n int) bool { return n == 3 && by["c"] == 0 })
	t.Logf("a dead member (lease 3 s): its shard served again after %s", took)
}

// A process that replaces a crashed one on the same host takes its shards
// at once instead of waiting out the lease: one whose pid is gone, and
// one with this process's pid in an earlier life (a restarted container).
func TestRestartOnTheSameHostTakesOverAtOnce(t *testing.T) {
	t.Parallel()
	db := storetest.Pool(t)
	const gonePID = 4_000_000 // above Linux's pid_max: no such process
	if _, err := db.Exec(t.Context(), `INSERT INTO herald_processes (id, host, pid, boot, version, lease_until) VALUES ('old', 'h', $1, 'b', 'v', now() + interval '1 hour')`, gonePID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(t.Context(), `INSERT INTO herald_processes (id, host, pid, boot, version, lease_until) VALUES ('older', 'h', $1, 'earlier', 'v', now() + interval '1 hour')`, os.Getpid()); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(t.Context(), `INSERT INTO herald_shards (shard_count, shard_id, owner, lease_until) VALUES (3, 0, 'old', now() + interval '1 hour'), (3, 1, 'older', now() + interval '1 hour')`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(t.Context(), `INSERT INTO herald_buckets (key, owner, lease_until) VALUES ('kb', 'old', now() + interval '1 hour')`); err != nil {
		t.Fatal(err)
	}
	s := &served{t: t, by: map[int]string{}}
	m := run(t, db, "h", s)
	s.waitFor("all three served", func(by map[string]int, n int) bool { return by["h"] == 3 })
	// The crashed process's bucket too, not an hour later.
	b := m.c.Buckets(BucketOptions{})
	go b.Run(t.Context())
	claimWithin(t, b, "kb", 5*time.Second)
}

// IDENTIFY turns of one key are spaced by the window for every process;
// another key has its own.
func TestReserveSpacesIdentifies(t *testing.T) {
	t.Parallel()
	db := storetest.Pool(t)
	c, err := Join(t.Context(), Options{DB: db, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	// When each turn begins, by this clock: the wait from a call, added to
	// the moment of the call (a loaded machine may take a while between
	// calls; the turns stay 5 s apart). The wait is counted from when
	// Postgres ran the statement, somewhere within the call's round trip,
	// so two turns' gap is off by at most the longer of their round trips.
	var turns []time.Time
	var trips []time.Duration
	for _, key := range []int{0, 0, 0, 1} {
		before := time.Now()
		w, err := c.Reserve(t.Context(), key, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		turns, trips = append(turns, before.Add(w)), append(trips, time.Since(before))
	}
	for i, want := range []time.Duration{5 * time.Second, 5 * time.Second} {
		off := max(trips[i], trips[i+1]) + 10*time.Millisecond
		if gap := turns[i+1].Sub(turns[i]); gap < want-off || gap > want+off {
			t.Errorf("turns %d and %d of key 0 are %s apart, want %s ± %s (the round trips)", i, i+1, gap, want, off)
		}
	}
	if gap := turns[3].Sub(turns[0]); gap > 2*time.Second {
		t.Errorf("key 1's first turn came %s after key 0's, want at once", gap)
	}
}

func pool(t *testing.T, url string) *pgxpool.Pool {
	t.Helper()
	db, err := pgxpool.New(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	return db
}
