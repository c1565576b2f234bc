package transport

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// While Discord fails most requests, requests below interactive priority
// go one at a time, probeEvery apart (one that may not wait that long is
// refused as rate limited, scope degraded, and not sent); member-facing
// requests go at once; once the failures are older than healthMaxAge,
// requests go as they come again.
func TestFailingDiscordIsProbedOneRequestAtATime(t *testing.T) {
	t.Parallel()
	var failing atomic.Bool
	failing.Store(true)
	d := newDiscord(t, func(r *http.Request, n int) reply {
		if failing.Load() {
			return reply{status: 503, body: `{"message":"upstream unavailable","code":0}`}
		}
		return ok()
	})
	e := d.engine(Config{})
	post := func(ctx context.Context, channel int) <-chan call {
		return d.send(ctx, e, "POST", "/channels/"+strconv.Itoa(channel)+"/messages")
	}
	// A message create is not resent after a 5xx: each fails once.
	for c := 1; c <= degradedFailures; c++ {
		d.waitRequests(c - 1)
		var unknown *UnknownOutcomeError
		if r := finished(t, post(t.Context(), c)); !errors.As(r.err, &unknown) {
			t.Fatalf("request %d: %v, want an unknown outcome", c, r.err)
		}
	}
	// Degraded: the first ticket event goes at once as the probe, and it
	// fails too; the next waits for its turn.
	finished(t, post(t.Context(), 10))
	d.waitRequests(degradedFailures + 1)
	next := post(t.Context(), 11)
	d.sleepers(1)
	if r := finished(t, post(WithMaxWait(t.Context(), 100*time.Millisecond), 12)); !isDegraded(r.err) {
		t.Errorf("a request that may wait 100 ms: %v, want rate limited (degraded) at once", r.err)
	}
	interactive := post(WithPriority(t.Context(), PriorityInteractive), 13)
	d.waitRequests(degradedFailures + 2)
	finished(t, interactive)
	d.clk.Advance(probeEvery - time.Millisecond)
	if n := d.clk.Woken(); n != 0 {
		t.Fatalf("%d timers fired before the probe's turn", n)
	}
	d.quiet(degradedFailures + 2)
	failing.Store(false)
	d.clk.Advance(time.Millisecond)
	if r := finished(t, next); r.err != nil {
		t.Fatalf("the next probe: %v", r.err)
	}
	if got := d.requests(); got[len(got)-1].path != "/api/v10/channels/11/messages" {
		t.Errorf("last request %s, want the probe", got[len(got)-1].path)
	}
	// Two wait for the next turn; one may wait 700 ms in all. Whichever
	// goes first, that one never waits a second turn.
	failing.Store(true)
	before := len(d.requests())
	free := post(WithPriority(t.Context(), PriorityBackground), 30)
	bounded := post(WithMaxWait(t.Context(), 700*time.Millisecond), 31)
	d.sleepers(2)
	d.clk.Advance(probeEvery)
	d.waitRequests(before + 1)
	r := finished(t, bounded)
	if d.countOf("POST", "/channels/30/messages") == 1 {
		if !isDegraded(r.err) {
			t.Errorf("the bounded request after another took its turn: %v, want refused (degraded)", r.err)
		}
		finished(t, free)
	} else {
		d.sleepers(1)
		d.clk.Advance(probeEvery)
		finished(t, free)
	}
	failing.Store(false)
	sent := before + d.countOf("POST", "/channels/30/messages") + d.countOf("POST", "/channels/31/messages")
	// The failures age out: requests go as they come.
	d.clk.Advance(healthMaxAge)
	a, b := post(t.Context(), 20), post(t.Context(), 21)
	for _, ch := range []<-chan call{a, b} {
		if r := finished(t, ch); r.err != nil {
			t.Fatal(r.err)
		}
	}
	if n := len(d.requests()); n != sent+2 {
		t.Errorf("%d requests, want %d: the refused ones never sent", n, sent+2)
	}
}

func isDegraded(err error) bool {
	var rl *RateLimitedError
	return errors.As(err, &rl) && rl.Scope == "degraded" && rl.RetryAfter > 0 && rl.RetryAfter <= probeEvery
}

// The health record counts recent failures once per bucket, and
// interactive requests never wait on it.
func TestHealthCountsRecentFailures(t *testing.T) {
	t.Parallel()
	var h health
	t0 := time.Unix(1_700_000_000, 0)
	// One resource failing again and again is its breaker's business.
	for range healthWindow {
		h.record(t0, "a", true)
	}
	if h.degraded(t0) {
		t.Fatal("degraded by one bucket's failures")
	}
	for i := 1; i < degradedFailures; i++ {
		h.record(t0, strconv.Itoa(i), true)
	}
	if !h.degraded(t0) || h.wait(PriorityEvents, t0) != 0 {
		t.Fatalf("%d buckets failing: degraded %v; the first probe must go at once", h.failures(t0), h.degraded(t0))
	}
	h.sending(PriorityEvents, t0)
	if w := h.wait(PriorityBackground, t0.Add(100*time.Millisecond)); w != probeEvery-100*time.Millisecond {
		t.Errorf("next probe in %s", w)
	}
	if w := h.wait(PriorityInteractive, t0); w != 0 {
		t.Errorf("an interactive request waits %s", w)
	}
	// Successes push failures out of the window.
	for range healthWindow - 1 {
		h.record(t0, "b", false)
	}
	if h.degraded(t0) {
		t.Errorf("still degraded with %d buckets failing in the last %d attempts", h.failures(t0), healthWindow)
	}
	// And failures older than healthMaxAge no longer count.
	var old health
	for i := range healthWindow {
		old.record(t0, strconv.Itoa(i), true)
	}
	if !old.degraded(t0.Add(healthMaxAge-time.Millisecond)) || old.degraded(t0.Add(healthMaxAge)) {
		t.Error("failures must count for healthMaxAge, then not at all")
	}
}
