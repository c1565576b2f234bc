package transport

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// 5xx answers back off with jitter, but never sooner than a reset Discord
// announced; after MaxRetries the request fails as Transient.
func TestServerErrorsBackOff(t *testing.T) {
	t.Parallel()
	d := newDiscord(t, func(r *http.Request, n int) reply {
		if n <= 2 {
			rep := limited("h1", 5, 0, "3") // the bucket is also empty for 3 s
			rep.status, rep.body = 503, `{"message":"upstream unavailable","code":0}`
			return rep
		}
		return ok()
	})
	e := d.engine(Config{BackoffBase: 100 * time.Millisecond, BackoffCap: time.Second})
	t0 := d.clk.Now()
	ch := d.send(t.Context(), e, "PATCH", msgs+"/5")
	d.waitRequests(1)
	d.sleepers(1)
	d.clk.Advance(2999 * time.Millisecond)
	d.quiet(1)
	d.clk.Advance(time.Millisecond)
	got := d.waitRequests(2)
	if at := got[1].at.Sub(t0); at != 3*time.Second {
		t.Errorf("first retry at +%s: a backoff shorter than the announced reset must wait for it", at)
	}
	// Second 503: the backoff (≤ 200 ms) exceeds nothing Discord asked
	// beyond the 3 s reset, which started again.
	d.sleepers(1)
	d.clk.Advance(3 * time.Second)
	if c := finished(t, ch); c.err != nil {
		t.Fatal(c.err)
	}
}

func TestServerErrorRetriesAreBounded(t *testing.T) {
	t.Parallel()
	d := newDiscord(t, func(r *http.Request, n int) reply {
		return reply{status: 500, body: `{"message":"500: Internal Server Error","code":0}`}
	})
	e := d.engine(Config{MaxRetries: 2, BackoffBase: 10 * time.Millisecond, BackoffCap: 10 * time.Millisecond})
	ch := d.send(t.Context(), e, "GET", "/channels/1")
	for n := 1; n <= 2; n++ {
		d.waitRequests(n)
		d.sleepers(1)
		d.clk.Advance(10 * time.Millisecond)
	}
	c := finished(t, ch)
	var tr *TransientError
	if !errors.As(c.err, &tr) || tr.Status != 500 || tr.Attempts != 3 {
		t.Fatalf("err = %v", c.err)
	}
	if cls, _ := Classify(c.err); cls != Transient {
		t.Errorf("class = %s", cls)
	}
}

// A lost answer to a message create is an unknown outcome (never resent
// blindly); the same loss on an idempotent PUT is retried; a POST marked
// idempotent (a nonce with enforce_nonce) is retried too.
func TestLostAnswers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		method  string
		path    string
		marked  bool
		unknown bool
	}{
		{"message create", "POST", msgs, false, true},
		{"member role add", "PUT", "/guilds/5/members/6/roles/7", false, false},
		{"message create with nonce", "POST", msgs, true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := newDiscord(t, func(r *http.Request, n int) reply {
				if n == 1 {
					return reply{drop: true}
				}
				return ok()
			})
			e := d.engine(Config{BackoffBase: 10 * time.Millisecond, BackoffCap: 10 * time.Millisecond})
			ctx := t.Context()
			if tc.marked {
				ctx = WithIdempotent(ctx)
			}
			ch := d.send(ctx, e, tc.method, tc.path)
			if !tc.unknown {
				d.waitRequests(1)
				d.sleepers(1)
				d.clk.Advance(10 * time.Millisecond)
			}
			c := finished(t, ch)
			cls, _ := Classify(c.err)
			switch {
			case tc.unknown && cls != UnknownOutcome:
				t.Fatalf("err = %v, want unknown outcome", c.err)
			case tc.unknown && len(d.requests()) != 1:
				t.Fatalf("an unknown outcome was resent: %d requests", len(d.requests()))
			case !tc.unknown && (c.err != nil || len(d.requests()) != 2):
				t.Fatalf("err = %v after %d requests, want a retry that succeeds", c.err, len(d.requests()))
			}
		})
	}
}

// A 5xx to a request Discord cannot deduplicate (an interaction follow-up,
// a message create without an enforced nonce) comes back as an unknown
// outcome, never resent: a resend could post it twice. Idempotent requests
// (GET, PUT, PATCH, DELETE, or a POST marked WithIdempotent) are retried.
func TestServerErrorsOnMutations(t *testing.T) {
	t.Parallel()
	tests := []struct {
		method, path string
		marked       bool
		status       int
		unknown      bool
	}{
		{"POST", "/webhooks/900/itok", false, 500, true},
		{"POST", "/webhooks/900/itok", false, 503, true},
		{"POST", msgs, false, 502, true},
		{"POST", msgs, false, 504, true},
		{"POST", "/interactions/1/itok/callback", false, 500, true},
		{"POST", msgs, true, 500, false},
		{"POST", msgs, true, 503, false},
		{"PATCH", "/webhooks/900/itok/messages/@original", false, 500, false},
		{"PUT", "/guilds/5/members/6/roles/7", false, 503, false},
		{"DELETE", msgs + "/5", false, 502, false},
	}
	for _, tc := range tests {
		name := fmt.Sprintf("%s %s %d marked=%v", tc.method, tc.path, tc.status, tc.marked)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			d := newDiscord(t, func(r *http.Request, n int) reply {
				if n == 1 {
					return reply{status: tc.status, body: `{"message":"server error","code":0}`}
				}
				return ok()
			})
			e := d.engine(Config{BackoffBase: 10 * time.Millisecond, BackoffCap: 10 * time.Millisecond})
			ctx := t.Context()
			if tc.marked {
				ctx = WithIdempotent(ctx)
			}
			ch := d.send(ctx, e, tc.method, tc.path)
			if !tc.unknown {
				d.waitRequests(1)
				d.sleepers(1)
				d.clk.Advance(10 * time.Millisecond)
			}
			c := finished(t, ch)
			var uo *UnknownOutcomeError
			switch {
			case tc.unknown && (!errors.As(c.err, &uo) || uo.Status != tc.status):
				t.Fatalf("err = %v, want an unknown outcome with status %d", c.err, tc.status)
			case tc.unknown && len(d.requests()) != 1:
				t.Fatalf("an unknown outcome was resent: %d requests", len(d.requests()))
			case !tc.unknown && (c.err != nil || len(d.requests()) != 2):
				t.Fatalf("err = %v after %d requests, want a retry that succeeds", c.err, len(d.requests()))
			}
			if cls, _ := Classify(c.err); tc.unknown && cls != UnknownOutcome {
				t.Errorf("class = %s", cls)
			}
		})
	}
}

// Unknown outcomes count as failures for the circuit breaker, like the 5xx
// retried for idempotent requests: the breaker opens after the threshold
// and Health lists it, by display name only.
func TestUnknownOutcomesOpenTheCircuit(t *testing.T) {
	t.Parallel()
	d := newDiscord(t, func(r *http.Request, n int) reply {
		return reply{status: 500, body: `{"message":"500: Internal Server Error","code":0}`}
	})
	e := d.engine(Config{BreakerThreshold: 2})
	const hook = "/webhooks/44/secret-webhook-token"
	for range 2 {
		var uo *UnknownOutcomeError
		if c := finished(t, d.send(t.Context(), e, "POST", hook)); !errors.As(c.err, &uo) {
			t.Fatalf("err = %v", c.err)
		}
	}
	var cb *CircuitOpenError
	if c := finished(t, d.send(t.Context(), e, "POST", hook)); !errors.As(c.err, &cb) || len(d.requests()) != 2 {
		t.Fatalf("err = %v after %d requests, want the open circuit to refuse", c.err, len(d.requests()))
	}
	h := e.Health()
	if len(h.OpenCircuits) != 1 {
		t.Fatalf("open circuits = %+v", h.OpenCircuits)
	}
	oc := h.OpenCircuits[0]
	if oc.Route != "POST /webhooks/{webhook_id}/{webhook_token}" || oc.State != "open" || oc.ConsecutiveFailures != 2 ||
		!oc.Since.Equal(d.clk.Now()) || strings.Contains(oc.Bucket, "secret") {
		t.Errorf("open circuit = %+v", oc)
	}
}

// A connection that fails before the request is written (the dial) proves
// nothing reached Discord: even a non-idempotent request is retried.
func TestDialFailureIsRetried(t *testing.T) {
	t.Parallel()
	d := newDiscord(t, func(r *http.Request, n int) reply { return ok() })
	var calls atomic.Int32
	base := d.srv.Client().Transport
	e := New(Config{Clock: d.clk, QueueTimeout: -1, ApplicationID: "900", BackoffBase: time.Millisecond, BackoffCap: time.Millisecond,
		Base: roundTripFunc(func(req *http.Request) (*http.Response, error) {
			if calls.Add(1) == 1 {
				return nil, &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
			}
			return base.RoundTrip(req)
		})})
	ch := d.send(t.Context(), e, "POST", "/webhooks/900/itok")
	d.sleepers(1)
	d.clk.Advance(time.Millisecond)
	if c := finished(t, ch); c.err != nil || len(d.requests()) != 1 || calls.Load() != 2 {
		t.Fatalf("err = %v, %d attempts, %d reached Discord", c.err, calls.Load(), len(d.requests()))
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// Every Discord error the simulator emits maps to the class the job layer
// acts on.
func TestClassifyDiscordErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		status int
		code   int
		want   Class
	}{
		{401, 0, Unauthorized},
		{403, 50001, Permission},
		{403, 50013, Permission},
		{404, 10003, NotFound},
		{404, 10004, NotFound},
		{404, 10007, NotFound},
		{404, 10008, NotFound},
		{404, 10011, NotFound},
		{404, 10013, NotFound},
		{404, 10015, NotFound},
		{404, 10062, NotFound},
		{400, 50035, Invalid},
		{400, 50006, Invalid},
		{400, 50109, Invalid},
		{400, 40060, Invalid},
		{400, 30013, Invalid},
		{400, 30007, Invalid},
		{405, 0, Invalid},
		{413, 40005, Invalid},
	}
	for _, tc := range tests {
		d := newDiscord(t, func(r *http.Request, n int) reply {
			return reply{status: tc.status, body: `{"message":"m","code":` + itoa(tc.code) + `,"errors":{"content":{"_errors":[]}}}`}
		})
		e := d.engine(Config{})
		c := finished(t, d.send(t.Context(), e, "POST", msgs))
		var api *APIError
		if !errors.As(c.err, &api) || api.Code != tc.code || api.Status != tc.status {
			t.Errorf("%d/%d: err = %v", tc.status, tc.code, c.err)
			continue
		}
		if cls, _ := Classify(c.err); cls != tc.want {
			t.Errorf("%d/%d: class %s, want %s", tc.status, tc.code, cls, tc.want)
		}
		if tc.code == 50035 && len(api.Errors) == 0 {
			t.Error("50035 must keep its errors object")
		}
		if len(d.requests()) != 1 {
			t.Errorf("%d/%d: a 4xx was retried", tc.status, tc.code)
		}
	}
}

// A 401 stops every later request without sending it.
func TestUnauthorizedStopsAllRest(t *testing.T) {
	t.Parallel()
	d := newDiscord(t, func(r *http.Request, n int) reply {
		return reply{status: 401, body: `{"message":"401: Unauthorized","code":0}`}
	})
	e := d.engine(Config{})
	finished(t, d.send(t.Context(), e, "GET", "/users/@me"))
	c := finished(t, d.send(t.Context(), e, "GET", "/channels/1"))
	if !errors.Is(c.err, ErrUnauthorized) || len(d.requests()) != 1 {
		t.Fatalf("err = %v after %d requests", c.err, len(d.requests()))
	}
	if !e.Snapshot().Unauthorized {
		t.Error("snapshot does not show the stop")
	}
}

// A webhook that answered 404 is never called again; others still are.
func TestDeadWebhook(t *testing.T) {
	t.Parallel()
	d := newDiscord(t, func(r *http.Request, n int) reply {
		if r.URL.Path == "/api/v10/webhooks/44/tok" {
			return reply{status: 404, body: `{"message":"Unknown Webhook","code":10015}`}
		}
		return ok()
	})
	e := d.engine(Config{})
	finished(t, d.send(t.Context(), e, "POST", "/webhooks/44/tok"))
	c := finished(t, d.send(t.Context(), e, "POST", "/webhooks/44/tok"))
	if cls, _ := Classify(c.err); cls != NotFound || len(d.requests()) != 1 {
		t.Fatalf("err = %v after %d requests", c.err, len(d.requests()))
	}
	if c := finished(t, d.send(t.Context(), e, "POST", "/webhooks/45/tok")); c.err != nil {
		t.Fatal(c.err)
	}
}

// Past the invalid-request budget the engine refuses to send until the
// 10-minute window slides.
func TestInvalidRequestBudget(t *testing.T) {
	t.Parallel()
	d := newDiscord(t, func(r *http.Request, n int) reply {
		return reply{status: 403, body: `{"message":"Missing Permissions","code":50013}`}
	})
	e := d.engine(Config{InvalidLimit: 3})
	for range 3 {
		finished(t, d.send(t.Context(), e, "PUT", "/guilds/5/members/6/roles/7"))
	}
	c := finished(t, d.send(t.Context(), e, "GET", "/channels/9"))
	var ib *InvalidBudgetError
	if !errors.As(c.err, &ib) || ib.Count != 3 || ib.RetryAfter <= 0 || ib.RetryAfter > 10*time.Minute {
		t.Fatalf("err = %v", c.err)
	}
	if len(d.requests()) != 3 {
		t.Fatalf("sent %d requests past the budget", len(d.requests())-3)
	}
	if h := e.Health(); h.InvalidRequests != 3 || h.InvalidLimit != 3 || h.Err() == nil {
		t.Errorf("health = %+v", h)
	}
	d.clk.Advance(10*time.Minute + time.Second)
	if c := finished(t, d.send(t.Context(), e, "GET", "/channels/9")); c.err == nil || errors.As(c.err, &ib) {
		t.Fatalf("after the window: err = %v, want Discord's 403 again", c.err)
	}
}

// A 401 Invalid Webhook Token (50027) condemns that webhook only: the bot
// token is fine and other requests go on.
func TestInvalidWebhookTokenIsNotABadBotToken(t *testing.T) {
	t.Parallel()
	d := newDiscord(t, func(r *http.Request, n int) reply {
		if strings.HasPrefix(r.URL.Path, "/api/v10/webhooks/") {
			return reply{status: 401, body: `{"message":"Invalid Webhook Token","code":50027}`}
		}
		return ok()
	})
	e := d.engine(Config{})
	c := finished(t, d.send(t.Context(), e, "POST", "/webhooks/44/wrong"))
	if cls, _ := Classify(c.err); cls != NotFound {
		t.Fatalf("err = %v, class %s, want not_found", c.err, cls)
	}
	if c := finished(t, d.send(t.Context(), e, "GET", "/channels/1")); c.err != nil {
		t.Fatalf("bot REST stopped after a webhook's 401: %v", c.err)
	}
	finished(t, d.send(t.Context(), e, "POST", "/webhooks/44/wrong"))
	if n := len(d.requests()); n != 2 {
		t.Errorf("the condemned webhook was called again: %d requests", n)
	}
	if s := e.Snapshot(); s.Unauthorized || s.InvalidRequests != 0 || s.InvalidBudgets[budgetWebhooks].Count != 1 {
		t.Errorf("snapshot = unauthorized %v, invalid %d (bot), budgets %+v", s.Unauthorized, s.InvalidRequests, s.InvalidBudgets)
	}
}

// Webhook calls with tokens a proxy caller supplied spend a budget of
// their own: a flood of bad tokens stops webhook calls once it is spent,
// while the bot's own calls and interaction answers go on, and the bot's
// budget stays untouched.
func TestBadWebhookTokensSpendOnlyTheirBudget(t *testing.T) {
	t.Parallel()
	d := newDiscord(t, func(r *http.Request, n int) reply {
		if strings.HasPrefix(r.URL.Path, "/api/v10/webhooks/44/") {
			return reply{status: 401, body: `{"message":"Invalid Webhook Token","code":50027}`}
		}
		return ok()
	})
	e := d.engine(Config{WebhookInvalidLimit: 5})
	for i := range 8 {
		finished(t, d.send(t.Context(), e, "POST", "/webhooks/44/bad-"+itoa(i)))
	}
	sent := 0
	for _, r := range d.requests() {
		if strings.HasPrefix(r.path, "/api/v10/webhooks/44/") {
			sent++
		}
	}
	if sent != 5 {
		t.Fatalf("%d bad-token calls reached Discord, want the budget's 5", sent)
	}
	var ib *InvalidBudgetError
	if c := finished(t, d.send(t.Context(), e, "POST", "/webhooks/45/good")); !errors.As(c.err, &ib) || ib.Budget != "webhooks" {
		t.Fatalf("a webhook call past the budget: %v", c.err)
	}
	for _, path := range []string{"/channels/1/messages", "/interactions/9/itok/callback", "/webhooks/900/itok"} {
		if c := finished(t, d.send(t.Context(), e, "POST", path)); c.err != nil {
			t.Fatalf("%s stopped by webhook tokens' 401s: %v", path, c.err)
		}
	}
	if h := e.Health(); h.InvalidRequests != 0 || h.Err() != nil {
		t.Fatalf("the bot's budget: %d, health %v", h.InvalidRequests, h.Err())
	}
}

// Unsent is true only for errors that prove nothing was carried out, so a
// caller may skip reading back what it meant to change.
func TestUnsent(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"held back past the caller's wait", &RateLimitedError{Scope: "user"}, true},
		{"invalid-request budget", &InvalidBudgetError{Budget: "bot"}, true},
		{"open circuit", &CircuitOpenError{}, true},
		{"queue timeout", &QueueTimeoutError{}, true},
		{"queue full", &QueueFullError{}, true},
		{"Discord's 429", &APIError{Status: http.StatusTooManyRequests}, true},
		{"Discord's edge", &APIError{Status: http.StatusForbidden, Code: codeEdgeBlocked}, true},
		{"wrapped", fmt.Errorf("rolemenu: %w", &RateLimitedError{}), true},
		{"5xx after retries", &TransientError{Status: 502}, false},
		{"lost connection", &UnknownOutcomeError{}, false},
		{"missing permission", &APIError{Status: http.StatusForbidden, Code: 50013}, false},
		{"unknown member", &APIError{Status: http.StatusNotFound, Code: 10007}, false},
		{"no error", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Unsent(tc.err); got != tc.want {
				t.Errorf("Unsent(%v) = %t, want %t", tc.err, got, tc.want)
			}
		})
	}
}
