package transport

import (
	"errors"
	"net/http"
	"testing"
	"time"
)

const msgs = "/channels/111/messages"

// After Remaining reaches 0, the next request goes exactly Reset-After
// later, not a millisecond sooner.
func TestPreemptiveWaitIsExact(t *testing.T) {
	t.Parallel()
	d := newDiscord(t, func(r *http.Request, n int) reply {
		return limited("h1", 2, 2-n%3, "2.5")
	})
	e := d.engine(Config{})
	ctx := t.Context()
	t0 := d.clk.Now()
	finished(t, d.send(ctx, e, "POST", msgs))
	finished(t, d.send(ctx, e, "POST", msgs)) // Remaining 0, reset in 2.5 s
	third := d.send(ctx, e, "POST", msgs)
	d.sleepers(1)
	d.clk.Advance(2499 * time.Millisecond)
	d.quiet(2)
	d.clk.Advance(time.Millisecond)
	got := d.waitRequests(3)
	if at := got[2].at.Sub(t0); at != 2500*time.Millisecond {
		t.Errorf("third request sent at +%s, want +2.5s", at)
	}
	if c := finished(t, third); c.err != nil {
		t.Fatal(c.err)
	}
}

// 429s are waited out exactly per scope: user and shared hold only their
// bucket, global holds every non-exempt bucket, and only non-shared 429s
// count as invalid requests.
func TestRateLimitScopes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		scope       string
		header      map[string]string
		body        string
		holdsOthers bool
		invalid     int
	}{
		{"user", map[string]string{"X-RateLimit-Scope": "user", "X-RateLimit-Bucket": "h", "X-RateLimit-Limit": "5", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset-After": "1.234", "Retry-After": "2"},
			`{"message":"You are being rate limited.","retry_after":1.234,"global":false}`, false, 1},
		{"shared", map[string]string{"X-RateLimit-Scope": "shared", "X-RateLimit-Bucket": "h", "X-RateLimit-Limit": "5", "X-RateLimit-Remaining": "3", "X-RateLimit-Reset-After": "0.2", "Retry-After": "2"},
			`{"message":"You are being rate limited.","retry_after":1.234,"global":false}`, false, 0},
		{"global", map[string]string{"X-RateLimit-Scope": "global", "X-RateLimit-Global": "true", "Retry-After": "2"},
			`{"message":"You are being rate limited.","retry_after":1.234,"global":true}`, true, 1},
	}
	for _, tc := range tests {
		t.Run(tc.scope, func(t *testing.T) {
			t.Parallel()
			d := newDiscord(t, func(r *http.Request, n int) reply {
				if r.URL.Path == "/api/v10"+msgs && n == 1 {
					return reply{status: 429, header: tc.header, body: tc.body}
				}
				return ok()
			})
			e := d.engine(Config{})
			ctx := t.Context()
			t0 := d.clk.Now()
			first := d.send(ctx, e, "POST", msgs)
			d.waitRequests(1)
			d.sleepers(1) // the retry waits
			other := d.send(ctx, e, "GET", "/guilds/222/roles")
			exempt := d.send(ctx, e, "POST", "/interactions/1/tok/callback")
			if tc.holdsOthers {
				d.waitRequests(2) // only the exempt callback goes
				d.quiet(2)
			} else {
				d.waitRequests(3)
			}
			// The retry waits on the engine's clock: a step short of the
			// wait wakes none of the engine's timers, so nothing is sent.
			d.clk.Advance(1233 * time.Millisecond)
			if n := d.clk.Woken(); n != 0 {
				t.Fatalf("a step to +1.233s woke %d of the engine's timers: the retry would go before the wait ended", n)
			}
			if n := d.countOf("POST", msgs); n != 1 {
				t.Fatalf("retried after %d attempts before the wait ended", n)
			}
			d.clk.Advance(time.Millisecond)
			retryAt := map[time.Duration]bool{0: true, 1234 * time.Millisecond: true}
			if tc.holdsOthers {
				// A global 429 after one request teaches a rate of one a
				// period (learn.go): the two held requests go a period
				// apart, in either order.
				d.waitRequests(3)
				d.quiet(3)
				d.clk.Advance(time.Second)
				retryAt[2234*time.Millisecond] = true
			}
			for _, ch := range []<-chan call{first, other, exempt} {
				if c := finished(t, ch); c.err != nil {
					t.Fatal(c.err)
				}
			}
			for _, r := range d.requests() {
				if r.path == "/api/v10"+msgs && !retryAt[r.at.Sub(t0)] {
					t.Errorf("retry at +%s, want +1.234s", r.at.Sub(t0))
				}
			}
			if got := e.Snapshot().InvalidRequests; got != tc.invalid {
				t.Errorf("invalid requests = %d, want %d", got, tc.invalid)
			}
		})
	}
}

// A header-less 429 comes from Discord's edge: every request stops, exempt
// ones included, for the whole Retry-After.
func TestEdgeBlockStopsEverything(t *testing.T) {
	t.Parallel()
	d := newDiscord(t, func(r *http.Request, n int) reply {
		if n == 1 && r.URL.Path == "/api/v10"+msgs {
			return reply{status: 429, header: map[string]string{"Retry-After": "60"},
				body: `{"code":0,"message":"You are being blocked from accessing our API temporarily due to exceeding our rate limits frequently.","retry_after":60,"global":false}`}
		}
		return ok()
	})
	e := d.engine(Config{})
	ctx := t.Context()
	first := d.send(ctx, e, "POST", msgs)
	d.waitRequests(1)
	d.sleepers(1)
	exempt := d.send(ctx, e, "POST", "/interactions/1/tok/callback")
	d.sleepers(2)
	d.clk.Advance(59999 * time.Millisecond)
	d.quiet(1)
	if s := e.Snapshot(); !s.EdgeBlockedUntil.After(s.Time) {
		t.Error("snapshot does not show the edge block")
	}
	if h := e.Health(); !h.EdgeBlockedUntil.After(h.Time) || h.Err() == nil {
		t.Errorf("health does not show the edge block: %+v", h)
	}
	d.clk.Advance(time.Millisecond)
	finished(t, first)
	finished(t, exempt)
}

// The preemptive global limit spaces non-exempt requests to GlobalLimit per
// period across buckets, a webhook's token among them (Discord counts
// it on the caller IP's global limit); interaction endpoints bypass it.
func TestGlobalLimitAndExemption(t *testing.T) {
	t.Parallel()
	d := newDiscord(t, func(r *http.Request, n int) reply { return ok() })
	e := d.engine(Config{GlobalLimit: 3, GlobalPeriod: time.Second})
	ctx := t.Context()
	var calls []<-chan call
	for i := range 2 {
		calls = append(calls, d.send(ctx, e, "GET", "/channels/"+itoa(1000+i)))
	}
	for i := range 2 {
		calls = append(calls, d.send(ctx, e, "POST", "/webhooks/"+itoa(44+i)+"/secret"))
	}
	d.waitRequests(3)
	for i := range 5 {
		calls = append(calls, d.send(ctx, e, "POST", "/interactions/"+itoa(i)+"/tok"+itoa(i)+"/callback"))
		calls = append(calls, d.send(ctx, e, "POST", "/webhooks/900/itok"+itoa(i)))
	}
	d.waitRequests(13) // every exempt request went while the fourth waits
	d.sleepers(1)
	d.clk.Advance(999 * time.Millisecond)
	d.quiet(13)
	d.clk.Advance(time.Millisecond)
	for _, c := range calls {
		if r := finished(t, c); r.err != nil {
			t.Fatal(r.err)
		}
	}
}

// More than MaxRetries 429s for one request end in a *RateLimitedError.
func TestRateLimitRetriesAreBounded(t *testing.T) {
	t.Parallel()
	d := newDiscord(t, func(r *http.Request, n int) reply {
		return reply{status: 429, header: map[string]string{"X-RateLimit-Scope": "user", "X-RateLimit-Bucket": "h", "X-RateLimit-Limit": "5",
			"X-RateLimit-Remaining": "0", "X-RateLimit-Reset-After": "0.010", "Retry-After": "1"}, body: `{"message":"You are being rate limited.","retry_after":0.01,"global":false}`}
	})
	e := d.engine(Config{MaxRetries: 2})
	ch := d.send(t.Context(), e, "POST", msgs)
	for n := 1; n <= 3; n++ {
		d.waitRequests(n)
		if n < 3 {
			d.sleepers(1)
			d.clk.Advance(10 * time.Millisecond)
		}
	}
	c := finished(t, ch)
	var rl *RateLimitedError
	if !errors.As(c.err, &rl) || rl.Scope != "user" || rl.RetryAfter != 10*time.Millisecond {
		t.Fatalf("err = %v", c.err)
	}
	if c.resp == nil || c.resp.StatusCode != 429 {
		t.Error("the last 429 should be returned with the error")
	}
	if cls, after := Classify(c.err); cls != RateLimited || after != 10*time.Millisecond {
		t.Errorf("Classify = %s %s", cls, after)
	}
}

// WithMaxWait returns a *RateLimitedError at once instead of sleeping when
// the bucket would hold the request longer.
func TestMaxWait(t *testing.T) {
	t.Parallel()
	d := newDiscord(t, func(r *http.Request, n int) reply { return limited("h1", 1, 0, "30") })
	e := d.engine(Config{})
	finished(t, d.send(t.Context(), e, "POST", msgs))

	short := WithMaxWait(t.Context(), 10*time.Second)
	c := finished(t, d.send(short, e, "POST", msgs))
	var rl *RateLimitedError
	if !errors.As(c.err, &rl) || rl.RetryAfter != 30*time.Second || rl.Bucket == "" || rl.Scope != "user" {
		t.Fatalf("err = %v", c.err)
	}
	long := d.send(WithMaxWait(t.Context(), time.Minute), e, "POST", msgs)
	d.sleepers(1)
	d.clk.Advance(30 * time.Second)
	if c := finished(t, long); c.err != nil {
		t.Fatal(c.err)
	}
	if len(d.requests()) != 2 {
		t.Errorf("requests = %d, want 2 (the refused one never went out)", len(d.requests()))
	}
}

// A request behind a full queue is refused by its estimate, not only by the
// current reset.
func TestMaxWaitCountsTheQueueAhead(t *testing.T) {
	t.Parallel()
	d := newDiscord(t, func(r *http.Request, n int) reply { return limited("h1", 2, n%2, "5") })
	e := d.engine(Config{})
	ctx := t.Context()
	finished(t, d.send(ctx, e, "POST", msgs)) // learns limit 2, window 5 s
	for range 5 {
		d.send(ctx, e, "POST", msgs)
	}
	d.waitRequests(2)
	d.sleepers(1)
	c := finished(t, d.send(WithMaxWait(ctx, 6*time.Second), e, "POST", msgs))
	var rl *RateLimitedError
	if !errors.As(c.err, &rl) || rl.RetryAfter <= 6*time.Second {
		t.Fatalf("err = %v, want a refusal estimating more than 6 s", c.err)
	}
}

// The global limit counts from when a request was answered: Discord counts
// it on arrival, which may be later than it was sent, so a slot is free
// again only a full period after the answer.
func TestGlobalLimitCountsFromTheAnswer(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	d := newDiscord(t, func(r *http.Request, n int) reply {
		if r.URL.Path == "/api/v10/channels/1" {
			<-release
		}
		return ok()
	})
	e := d.engine(Config{GlobalLimit: 1, GlobalPeriod: time.Second})
	ctx := t.Context()
	t0 := d.clk.Now()
	slow := d.send(ctx, e, "GET", "/channels/1")
	d.waitRequests(1)
	next := d.send(ctx, e, "GET", "/channels/2")
	d.sleepers(1)
	d.clk.Advance(5 * time.Second) // the first is still in flight
	d.quiet(1)
	close(release)
	finished(t, slow) // answered at +5 s
	d.sleepers(1)
	d.clk.Advance(999 * time.Millisecond)
	d.quiet(1)
	d.clk.Advance(time.Millisecond)
	got := d.waitRequests(2)
	if at := got[1].at.Sub(t0); at != 6*time.Second {
		t.Errorf("second request at +%s, want +6s (answer + period)", at)
	}
	finished(t, next)
}
