package transport

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/herald-bot/herald/internal/testsupport/wait"
)

// The global limit here is one request per 10 s, so each step of the fake
// clock frees exactly one slot and the order Discord sees is the order the
// engine chose. Edits in channel 1 are 5 per 5 s, member-role changes in
// guild 5 are 2 per 10 s: with 5 queued the role bucket needs 20 s to drain,
// the edits none.
func schedulingDiscord(t *testing.T, roleReset string, cfg Config) (*discord, *Engine) {
	d := newDiscord(t, func(r *http.Request, n int) reply {
		switch {
		case strings.HasPrefix(r.URL.Path, "/api/v10/channels/1/"):
			return limited("edits", 5, 4, "5")
		case strings.HasPrefix(r.URL.Path, "/api/v10/guilds/5/"):
			remaining := 1
			if roleReset != "10" {
				remaining = 0
			}
			return limited("roles", 2, remaining, roleReset)
		}
		return ok()
	})
	cfg.GlobalPeriod = 10 * time.Second
	e := d.engine(cfg)
	return d, e
}

// warm makes Discord describe both buckets: one edit, then one role change.
func warm(t *testing.T, d *discord, e *Engine, slotsFree bool) {
	finished(t, d.send(t.Context(), e, "PATCH", "/channels/1/messages/0"))
	role := d.send(t.Context(), e, "PUT", "/guilds/5/members/6/roles/0")
	if !slotsFree {
		d.sleepers(1)
		d.clk.Advance(10 * time.Second)
	}
	finished(t, role)
}

// settle waits until the engine holds queued requests in waiting buckets,
// none on the wire, so a clock step frees a slot among all of them.
func settle(t *testing.T, e *Engine, queued, waiters int) {
	t.Helper()
	wait.Until(t, fmt.Sprintf("%d queued in %d waiting buckets", queued, waiters), func() bool {
		s := e.Snapshot()
		n := 0
		for _, b := range s.Buckets {
			if b.InFlight {
				return false
			}
			n += b.QueueLength
		}
		return n == queued && s.GlobalWaiters == waiters
	})
}

type queuedReq struct {
	ctx          context.Context
	method, path string
}

// sentOrder names the requests Discord received after the first skip.
func sentOrder(d *discord, skip int) []string {
	var got []string
	for _, r := range d.requests()[skip:] {
		got = append(got, r.method+" "+strings.TrimPrefix(r.path, "/api/v10"))
	}
	return got
}

// Free global slots go by priority first, then to the bucket with the
// longest drain, then to the most queued and the oldest.
func TestGlobalSlotsByPriorityThenDrain(t *testing.T) {
	t.Parallel()
	d, e := schedulingDiscord(t, "10", Config{GlobalLimit: 1, AgingStep: 5 * time.Second})
	warm(t, d, e, false)
	ctx := t.Context()
	edit := func(n string) string { return "/channels/1/messages/" + n }
	role := func(n string) string { return "/guilds/5/members/6/roles/" + n }
	interactive, background := WithPriority(ctx, PriorityInteractive), WithPriority(ctx, PriorityBackground)
	reqs := []queuedReq{
		{ctx, "PATCH", edit("1")}, {ctx, "PATCH", edit("2")}, {ctx, "PATCH", edit("3")},
		{interactive, "PATCH", edit("4")},
		{ctx, "PUT", role("1")}, {ctx, "PUT", role("2")}, {ctx, "PUT", role("3")}, {ctx, "PUT", role("4")}, {ctx, "PUT", role("5")},
		{background, "GET", "/channels/9"}, // a bucket not described yet counts as the longest drain
	}
	var calls []<-chan call
	for i, q := range reqs {
		calls = append(calls, d.send(q.ctx, e, q.method, q.path))
		d.queued(e, i+1) // in this order: it breaks the last ties
	}
	// All queued at once, so every request ages alike. Each decision:
	want := []string{
		"PATCH " + edit("4"), // interactive: priority beats every drain
		"PUT " + role("1"),   // role drain 20 s (5 queued, 2 per 10 s) > edits 0
		"PUT " + role("2"),   // 10 s > 0
		"PUT " + role("3"),   // 10 s > 0
		"PATCH " + edit("1"), // both drain 0: 3 edits queued > 2 roles
		"PATCH " + edit("2"), // 2 = 2: equal rank, queued first
		"PUT " + role("4"),   // 2 > 1
		"PATCH " + edit("3"), // 1 = 1: queued first
		"PUT " + role("5"),
		"GET /channels/9", // background comes last
	}
	for i := range want {
		left := want[i:]
		buckets := map[string]bool{}
		for _, w := range left {
			f := strings.Split(w, "/") // "PUT", "guilds", "5", ...: the bucket is the resource
			buckets[f[1]+"/"+f[2]] = true
		}
		settle(t, e, len(left), len(buckets))
		d.sleepers(1) // the engine's one global timer
		d.clk.Advance(10 * time.Second)
		d.waitRequests(2 + i + 1)
	}
	for _, c := range calls {
		if r := finished(t, c); r.err != nil {
			t.Fatal(r.err)
		}
	}
	if got := sentOrder(d, 2); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("order:\n got %v\nwant %v", got, want)
	}
}

// Aging keeps a short bucket from starving: a request that waited one
// AgingStep longer goes before a longer drain at the same priority.
func TestGlobalSlotsAge(t *testing.T) {
	t.Parallel()
	d, e := schedulingDiscord(t, "10", Config{GlobalLimit: 1, AgingStep: 5 * time.Second})
	warm(t, d, e, false)
	ctx := t.Context()
	first := d.send(ctx, e, "PATCH", "/channels/1/messages/1")
	settle(t, e, 1, 1)
	d.clk.Advance(5 * time.Second) // the slot frees in 10 s
	var roles []<-chan call
	for i := range 5 {
		roles = append(roles, d.send(ctx, e, "PUT", "/guilds/5/members/6/roles/"+itoa(i)))
	}
	settle(t, e, 6, 2)
	d.sleepers(1)
	d.clk.Advance(5 * time.Second)
	d.waitRequests(3)
	finished(t, first)
	if got := sentOrder(d, 2); got[0] != "PATCH /channels/1/messages/1" {
		t.Fatalf("sent %v first, want the edit that waited an AgingStep longer", got)
	}
	for range roles {
		settle(t, e, len(roles)-len(sentOrder(d, 3)), 1)
		d.sleepers(1)
		d.clk.Advance(10 * time.Second)
		d.waitRequests(3 + len(sentOrder(d, 3)) + 1)
	}
	for _, c := range roles {
		finished(t, c)
	}
}

// A free slot is held for the longest drain when its bucket's own limit
// releases it within a global period: the edit would otherwise take it,
// and the role bucket would wait for the next slot.
func TestGlobalSlotHeldForTheLongestDrain(t *testing.T) {
	t.Parallel()
	// Every role answer empties the role bucket for 15 s.
	d, e := schedulingDiscord(t, "15", Config{GlobalLimit: 2})
	warm(t, d, e, true) // both slots used now, free in 10 s
	t0 := d.clk.Now()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	for i := range 3 {
		d.send(ctx, e, "PATCH", "/channels/1/messages/"+itoa(i+1))
	}
	for i := range 5 {
		d.send(ctx, e, "PUT", "/guilds/5/members/6/roles/"+itoa(i+1))
	}
	settle(t, e, 8, 1)
	d.sleepers(2)                   // the role bucket until its reset, and the global timer
	d.clk.Advance(10 * time.Second) // both slots free: one for the edits, one held
	d.waitRequests(3)
	d.sleepers(2)
	d.clk.Advance(5 * time.Second) // the role bucket resets and takes the held slot
	got := d.waitRequests(4)
	d.quiet(4)
	if !strings.HasPrefix(got[2].path, "/api/v10/channels/1/") || got[2].at.Sub(t0) != 10*time.Second ||
		!strings.HasPrefix(got[3].path, "/api/v10/guilds/5/") || got[3].at.Sub(t0) != 15*time.Second {
		t.Errorf("sent %s at +%s and %s at +%s, want an edit at +10s and a role change at +15s",
			got[2].path, got[2].at.Sub(t0), got[3].path, got[3].at.Sub(t0))
	}
}
