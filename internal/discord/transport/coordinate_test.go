package transport

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/herald-bot/herald/internal/testsupport/wait"
)

// coordinator is a Coordinator that holds what held says and records
// the keys claimed.
type coordinator struct {
	mu      sync.Mutex
	held    func(key string) bool
	wanted  string
	claimed map[string]int
	starved map[string]int
}

func (c *coordinator) Claim(key string, _ func()) Claim {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.claimed[key]++
	if c.held(key) {
		return Claim{Held: true, Wanted: key == c.wanted}
	}
	return Claim{Wait: time.Hour}
}

func (c *coordinator) claims(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.claimed[key]
}

func (*coordinator) Report(string, BucketState) {}
func (c *coordinator) Starved(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.starved[key]++
}

func (*coordinator) Idle(string, BucketState) {}
func (*coordinator) Learned(string, string)   {}

// A bucket another process waits for goes first for global slots at the
// same priority, although here it drains no longer than the others and
// holds fewer requests: what waits for it elsewhere is not in its queue.
func TestWantedBucketGoesFirst(t *testing.T) {
	t.Parallel()
	d, e := schedulingDiscord(t, "10", Config{GlobalLimit: 1})
	c := &coordinator{held: func(string) bool { return true }, wanted: leaseKey("roles|5"), claimed: map[string]int{}, starved: map[string]int{}}
	e.Coordinate(c)
	warm(t, d, e, false)
	ctx := t.Context()
	var calls []<-chan call
	for i, path := range []string{"/channels/1/messages/1", "/channels/1/messages/2", "/guilds/5/members/6/roles/1"} {
		calls = append(calls, d.send(ctx, e, map[bool]string{true: "PUT", false: "PATCH"}[strings.Contains(path, "roles")], path))
		d.queued(e, i+1)
	}
	settle(t, e, 3, 2)
	d.sleepers(1)
	d.clk.Advance(10 * time.Second)
	d.waitRequests(3)
	if got := sentOrder(d, 2); len(got) != 1 || got[0] != "PUT /guilds/5/members/6/roles/1" {
		t.Fatalf("first sent %v, want the wanted role bucket before 2 edits (both drain nothing)", got)
	}
	// The edits waited for the global slot: the coordinator heard, so a
	// process with slots to spare may take their bucket.
	c.mu.Lock()
	starved := c.starved[leaseKey("edits|1")]
	c.mu.Unlock()
	if starved == 0 {
		t.Error("the edits' bucket waited for a global slot and the coordinator never heard")
	}
	// The edits go one a global slot at a time. The clock moves on until
	// both are sent, rather than once per sleeper: a sleeper counted
	// before the edits' bucket parked again let its wait start after the
	// step, and the edit never went (seen once in CI on a loaded machine).
	wait.Until(t, "both edits sent", func() bool {
		d.clk.Advance(time.Second)
		return len(d.requests()) >= 5
	})
	for _, c := range calls {
		if r := finished(t, c); r.err != nil {
			t.Fatal(r.err)
		}
	}
}

// Requests queued under a route's name, waiting for that name's lease,
// move to the bucket's hash once another process shares it, and claim
// the hash's lease: the holder hands on the hash's lease, and keeps the
// route's name only while it uses the bucket.
func TestSeededHashMovesQueuedRequests(t *testing.T) {
	t.Parallel()
	const route = "PATCH /channels/{channel_id}/messages/{message_id}"
	d := newDiscord(t, func(*http.Request, int) reply { return ok() })
	e := d.engine(Config{})
	hashKey := leaseKey("edits|1")
	c := &coordinator{held: func(key string) bool { return key == hashKey }, claimed: map[string]int{}, starved: map[string]int{}}
	e.Coordinate(c)
	sent := d.send(t.Context(), e, "PATCH", "/channels/1/messages/1")
	wait.Until(t, "a claim under the route's name", func() bool { return c.claims(leaseKey(route+"|1")) > 0 })

	e.SeedHashes(map[string]string{route: "edits"})
	if r := finished(t, sent); r.err != nil {
		t.Fatal(r.err)
	}
	if c.claims(hashKey) == 0 {
		t.Fatal("the request was sent without claiming the hash's lease")
	}
}

// A bucket another process waits for holds requests there too: with three
// processes its drain counts its queue here three times, and it goes
// first only if that is the longest — never, as it once did, before a
// longer drain that nobody has asked for yet. A bucket handed over comes
// without its window's length, so its drain is unknown: the longest.
func TestWantedBucketsDrainCountsEveryProcess(t *testing.T) {
	t.Parallel()
	e := New(Config{GlobalLimit: 5})
	e.Share(3, 0)
	now := time.Unix(1_800_000_000, 0)
	bucketOf := func(limit, queued int, window time.Duration, wanted bool) *bucket {
		b := newBucket(fmt.Sprint(limit, queued, window, wanted), "", Route{})
		b.known, b.limit, b.remaining, b.resetAt, b.window, b.wanted = true, limit, 0, now.Add(-time.Second), window, wanted
		for i := range queued {
			b.push(&item{enqueued: now, rank: now, seq: uint64(i)})
		}
		return b
	}
	// 30 member-role changes at 10 per 10 s drain in 20 s (the window
	// ended: 10 go in the next, then two more windows).
	roles := bucketOf(10, 30, 10*time.Second, false)
	for _, tc := range []struct {
		name  string
		other *bucket
		first bool // roles goes first
	}{
		{"5 wanted edits, as 15 at 5 per 5 s: 10 s", bucketOf(5, 5, 5*time.Second, true), true},
		{"12 wanted edits, as 36: 35 s", bucketOf(5, 12, 5*time.Second, true), false},
		{"12 edits nobody else wants: 10 s", bucketOf(5, 12, 5*time.Second, false), true},
		{"5 edits handed over, window unknown", bucketOf(5, 5, 0, false), false},
	} {
		if got := e.claimOf(roles, now).before(e.claimOf(tc.other, now)); got != tc.first {
			t.Errorf("%s: roles before it = %v, want %v (roles drain %s, its %s)", tc.name, got, tc.first,
				e.claimOf(roles, now).drain, e.claimOf(tc.other, now).drain)
		}
	}
	// Equal drains: the wanted one goes first, to be handed on sooner.
	a, b := bucketOf(5, 3, 5*time.Second, false), bucketOf(5, 1, 5*time.Second, true)
	if !e.claimOf(b, now).before(e.claimOf(a, now)) {
		t.Error("between two buckets that drain at once, the wanted one did not go first")
	}
}
