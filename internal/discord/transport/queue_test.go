package transport

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// Circuit breaker: closed → open after the threshold (later requests fail
// at once, unsent) → after the reset one probe → a failed probe reopens,
// a good one closes.
func TestCircuitBreaker(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	healthy := false
	d := newDiscord(t, func(r *http.Request, n int) reply {
		mu.Lock()
		defer mu.Unlock()
		if healthy {
			return ok()
		}
		return reply{status: 503, body: `{"message":"503: Service Unavailable","code":0}`}
	})
	e := d.engine(Config{BreakerThreshold: 3, BreakerReset: 30 * time.Second, MaxRetries: 10, BackoffBase: time.Millisecond, BackoffCap: time.Millisecond})
	ctx := t.Context()
	ch := d.send(ctx, e, "GET", "/channels/1")
	for n := 1; n < 3; n++ {
		d.waitRequests(n)
		d.sleepers(1)
		d.clk.Advance(time.Millisecond)
	}
	var cb *CircuitOpenError
	if c := finished(t, ch); !errors.As(c.err, &cb) || cb.ConsecutiveFailures != 3 || cb.RetryAfter != 30*time.Second {
		t.Fatalf("third failure: err = %v", c.err)
	}
	if c := finished(t, d.send(ctx, e, "GET", "/channels/1")); !errors.As(c.err, &cb) || len(d.requests()) != 3 {
		t.Fatalf("open circuit: err = %v after %d requests", c.err, len(d.requests()))
	}
	if cls, after := Classify(cb); cls != Transient || after != 30*time.Second {
		t.Errorf("Classify = %s %s", cls, after)
	}
	other, stop := context.WithCancel(ctx)
	otherCall := d.send(other, e, "GET", "/channels/2")
	d.waitRequests(4) // another bucket still reaches Discord
	stop()
	if c := finished(t, otherCall); !errors.Is(c.err, context.Canceled) {
		t.Fatalf("other bucket: err = %v", c.err)
	}
	d.clk.Advance(30 * time.Second)
	if c := finished(t, d.send(ctx, e, "GET", "/channels/1")); !errors.As(c.err, &cb) {
		t.Fatalf("failed probe: err = %v", c.err)
	}
	if got := d.count["GET /api/v10/channels/1"]; got != 4 {
		t.Fatalf("half-open let %d requests through, want 1 probe", got-3)
	}
	if s := bucketOf(e, "GET", "/channels/1"); s.Breaker != "open" {
		t.Fatalf("after a failed probe the breaker is %s", s.Breaker)
	}
	d.clk.Advance(30 * time.Second)
	mu.Lock()
	healthy = true
	mu.Unlock()
	if c := finished(t, d.send(ctx, e, "GET", "/channels/1")); c.err != nil {
		t.Fatalf("good probe: %v", c.err)
	}
	if s := bucketOf(e, "GET", "/channels/1"); s.Breaker != "closed" || s.ConsecutiveFailures != 0 {
		t.Fatalf("after a good probe: %+v", s)
	}
}

// bucketOf finds the bucket serving a request by its route and the
// fingerprint of its major parameter.
func bucketOf(e *Engine, method, path string) BucketSnapshot {
	r := ParseRoute(method, path, "900")
	suffix := strings.TrimPrefix(displayName("x", r), "x")
	for _, b := range e.Snapshot().Buckets {
		if b.Route == r.Key() && strings.HasSuffix(b.Name, suffix) {
			return b
		}
	}
	return BucketSnapshot{}
}

// Routes Discord files under one hash share one bucket; when a route's hash
// changes, its queued requests move to the new bucket and obey its limit.
func TestBucketHashSharingAndRemap(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	hash := "roles-v1"
	d := newDiscord(t, func(r *http.Request, n int) reply {
		mu.Lock()
		defer mu.Unlock()
		return limited(hash, 10, 9, "10")
	})
	e := d.engine(Config{})
	ctx := t.Context()
	finished(t, d.send(ctx, e, "PUT", "/guilds/5/members/6/roles/7"))
	finished(t, d.send(ctx, e, "DELETE", "/guilds/5/members/6/roles/7"))
	var shared int
	for _, b := range e.Snapshot().Buckets {
		if strings.HasPrefix(b.Name, "roles-v1#") {
			shared++
			if b.Processed != 2 {
				t.Errorf("shared bucket processed %d, want 2 (add and remove)", b.Processed)
			}
		}
	}
	if shared != 1 {
		t.Fatalf("buckets named roles-v1: %d, want one shared by both routes", shared)
	}

	// Discord now reports a new hash whose bucket is exhausted for 10 s.
	mu.Lock()
	hash = "roles-v2"
	mu.Unlock()
	d.reply = func(r *http.Request, n int) reply { return limited("roles-v2", 1, 0, "10") }
	first := d.send(ctx, e, "PUT", "/guilds/5/members/6/roles/8")
	d.waitRequests(3)
	finished(t, first)
	queued := []<-chan call{d.send(ctx, e, "PUT", "/guilds/5/members/6/roles/9"), d.send(ctx, e, "PUT", "/guilds/5/members/6/roles/10")}
	d.sleepers(1)
	d.quiet(3)
	d.clk.Advance(10 * time.Second)
	d.waitRequests(4)
	d.sleepers(1)
	d.clk.Advance(10 * time.Second)
	for _, ch := range queued {
		if c := finished(t, ch); c.err != nil {
			t.Fatal(c.err)
		}
	}
	got := d.requests()
	if gap := got[4].at.Sub(got[3].at); gap != 10*time.Second {
		t.Errorf("queued requests %s apart, want the new bucket's 10 s", gap)
	}
}

// A remap moves requests already queued under the old bucket.
func TestRemapMovesQueuedRequests(t *testing.T) {
	t.Parallel()
	d := newDiscord(t, func(r *http.Request, n int) reply {
		if n == 1 {
			return limited("old", 1, 0, "5")
		}
		return limited("new", 5, 4, "5")
	})
	e := d.engine(Config{})
	ctx := t.Context()
	finished(t, d.send(ctx, e, "POST", msgs)) // files the route under "old", exhausted for 5 s
	a, b := d.send(ctx, e, "POST", msgs), d.send(ctx, e, "POST", msgs)
	d.sleepers(1)
	d.clk.Advance(5 * time.Second)
	d.waitRequests(2) // answered with hash "new": the other queued request moves
	for _, ch := range []<-chan call{a, b} {
		if c := finished(t, ch); c.err != nil {
			t.Fatal(c.err)
		}
	}
	for _, s := range e.Snapshot().Buckets {
		if strings.HasPrefix(s.Name, "old#") && s.QueueLength != 0 {
			t.Errorf("old bucket still holds %d requests", s.QueueLength)
		}
	}
}

// Inside one bucket interactive requests go before background ones, but a
// background request that waited long enough is not starved.
func TestPriorityWithAging(t *testing.T) {
	t.Parallel()
	d := newDiscord(t, func(r *http.Request, n int) reply { return limited("h", 1, 0, "10") })
	e := d.engine(Config{AgingStep: 2 * time.Second})
	bg := WithPriority(t.Context(), PriorityBackground)
	in := WithPriority(t.Context(), PriorityInteractive)
	finished(t, d.send(bg, e, "PATCH", msgs+"/1")) // empties the bucket for 10 s
	// Queued while the bucket is empty, with their ranks (queued at +
	// 3 levels × 2 s for background): /2 bg at 0 s → 6, /4 bg at 2 s → 8,
	// /3 interactive at 5 s → 5, /5 interactive at 7 s → 7.
	var calls []<-chan call
	for i, q := range []struct {
		ctx     context.Context
		id      string
		advance time.Duration
	}{{bg, "2", 2 * time.Second}, {bg, "4", 3 * time.Second}, {in, "3", 2 * time.Second}, {in, "5", 3 * time.Second}} {
		calls = append(calls, d.send(q.ctx, e, "PATCH", msgs+"/"+q.id))
		d.queued(e, i+1)
		d.clk.Advance(q.advance)
	}
	for n := 2; n <= 5; n++ {
		d.waitRequests(n)
		if n < 5 {
			d.sleepers(1)
			d.clk.Advance(10 * time.Second)
		}
	}
	for _, c := range calls {
		if r := finished(t, c); r.err != nil {
			t.Fatal(r.err)
		}
	}
	var order []string
	for _, r := range d.requests()[1:] {
		order = append(order, strings.TrimPrefix(r.path, "/api/v10"+msgs+"/"))
	}
	// The interactive /3 overtakes the older background /2, but /2 has aged
	// past the later interactive /5, which in turn goes before /4.
	if strings.Join(order, ",") != "3,2,5,4" {
		t.Errorf("order = %v, want 3,2,5,4", order)
	}
}

// A cancelled context leaves the queue at once; a full queue and a queue
// timeout each give their typed error.
func TestQueueLimits(t *testing.T) {
	t.Parallel()
	d := newDiscord(t, func(r *http.Request, n int) reply { return limited("h", 1, 0, "60") })
	e := d.engine(Config{MaxQueueDepth: 2, QueueTimeout: 10 * time.Second})
	finished(t, d.send(t.Context(), e, "POST", msgs))

	ctx, cancel := context.WithCancel(t.Context())
	cancelled := d.send(ctx, e, "POST", msgs)
	timed := d.send(t.Context(), e, "POST", msgs)
	d.sleepers(3) // the worker and two queue timers
	full := finished(t, d.send(t.Context(), e, "POST", msgs))
	var qf *QueueFullError
	if !errors.As(full.err, &qf) || qf.MaxDepth != 2 || qf.QueueLen != 2 {
		t.Fatalf("full queue: err = %v", full.err)
	}
	cancel()
	if c := finished(t, cancelled); !errors.Is(c.err, context.Canceled) {
		t.Fatalf("cancelled: err = %v", c.err)
	}
	d.clk.Advance(10 * time.Second)
	c := finished(t, timed)
	var qt *QueueTimeoutError
	if !errors.As(c.err, &qt) || qt.Waited != 10*time.Second || qt.Route != "POST /channels/{channel_id}/messages" {
		t.Fatalf("queue timeout: err = %v", c.err)
	}
	s := bucketOf(e, "POST", msgs)
	if s.Cancelled != 1 || s.TimedOut != 1 || s.QueueLength != 0 {
		t.Errorf("snapshot = %+v", s)
	}
	if len(d.requests()) != 1 {
		t.Errorf("%d requests sent, want 1", len(d.requests()))
	}
}

func TestCancelAll(t *testing.T) {
	t.Parallel()
	d := newDiscord(t, func(r *http.Request, n int) reply { return limited("h", 1, 0, "60") })
	e := d.engine(Config{})
	finished(t, d.send(t.Context(), e, "POST", msgs))
	a, b := d.send(t.Context(), e, "POST", msgs), d.send(t.Context(), e, "GET", "/guilds/1/roles")
	d.waitRequests(2)
	d.sleepers(1)
	if n := e.CancelAll("shutdown"); n != 1 {
		t.Errorf("CancelAll = %d, want 1 queued request", n)
	}
	var ce *CancelledError
	if c := finished(t, a); !errors.As(c.err, &ce) || ce.Reason != "shutdown" {
		t.Fatalf("err = %v", c.err)
	}
	if c := finished(t, b); c.err != nil {
		t.Fatalf("the request already answered: %v", c.err)
	}
}

// One bucket per interaction token would leak; idle expired buckets go.
func TestIdleBucketsArePruned(t *testing.T) {
	t.Parallel()
	d := newDiscord(t, func(r *http.Request, n int) reply { return limited("cb", 1, 0, "1") })
	e := d.engine(Config{IdleBucket: time.Minute})
	for i := range 100 {
		finished(t, d.send(t.Context(), e, "POST", "/interactions/"+itoa(i)+"/token"+itoa(i)+"/callback"))
	}
	if n := len(e.Snapshot().Buckets); n != 100 {
		t.Fatalf("buckets = %d, want one per interaction token", n)
	}
	d.clk.Advance(2 * time.Minute)
	finished(t, d.send(t.Context(), e, "GET", "/users/@me"))
	if n := len(e.Snapshot().Buckets); n != 1 {
		t.Fatalf("buckets after idling = %d, want only the new one", n)
	}
}

// Metrics and snapshots never carry tokens or ids.
func TestDiagnosticsHaveNoSecrets(t *testing.T) {
	t.Parallel()
	d := newDiscord(t, func(r *http.Request, n int) reply {
		rep := limited("hooks", 5, 4, "2")
		if n == 1 {
			rep.status = 429
			rep.header["X-RateLimit-Scope"] = "shared"
			rep.body = `{"message":"You are being rate limited.","retry_after":0.001,"global":false}`
		}
		return rep
	})
	reg := prometheus.NewRegistry()
	e := d.engine(Config{Registerer: reg})
	ch := d.send(t.Context(), e, "POST", "/webhooks/123456789012345678/super-secret-webhook-token")
	d.waitRequests(1)
	d.sleepers(1)
	d.clk.Advance(time.Millisecond)
	finished(t, ch)
	if n := testutil.ToFloat64(e.metrics.rateLimited.WithLabelValues("POST /webhooks/{webhook_id}/{webhook_token}", "shared")); n != 1 {
		t.Errorf("shared 429s = %v", n)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if strings.Contains(l.GetValue(), "secret") || strings.Contains(l.GetValue(), "123456789012345678") {
					t.Errorf("metric %s label %s=%s leaks an id or token", f.GetName(), l.GetName(), l.GetValue())
				}
			}
		}
	}
	for _, b := range e.Snapshot().Buckets {
		if strings.Contains(b.Name, "secret") || strings.Contains(b.Route, "secret") {
			t.Errorf("snapshot leaks the token: %+v", b)
		}
		if b.RateLimited["shared"] != 1 || b.Retried != 1 {
			t.Errorf("snapshot = %+v", b)
		}
	}
}
