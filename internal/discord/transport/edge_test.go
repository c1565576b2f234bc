package transport

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Discord's Cloudflare answers a request it blocks — one without a proper
// User-Agent, say — with 403 and code 40333 "Cloudflare is blocking your
// request" (Opcodes and Status Codes), or with an HTML page of its own:
// the bot lacks no permission. The engine classes it Blocked, holds every
// request for EdgeBlockWait (each further request would count as invalid
// too), and says why in Health. A 403 in Discord's JSON with another code
// is still a missing permission.
func TestEdgeBlockIsNotAPermission(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		reply reply
		want  string
	}{
		{"code 40333", reply{status: 403, body: `{"message":"internal network error","code":40333}`}, "code 40333: internal network error"},
		{"an HTML page", reply{status: 403, header: map[string]string{"Content-Type": "text/html; charset=UTF-8"},
			body: `<!DOCTYPE html><title>Access denied | discord.com used Cloudflare to restrict access</title>error code: 1020`}, "HTML page"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := newDiscord(t, func(r *http.Request, n int) reply {
				if n == 1 && r.URL.Path == "/api/v10"+msgs {
					return tc.reply
				}
				return ok()
			})
			e := d.engine(Config{EdgeBlockWait: 90 * time.Second})
			first := finished(t, d.send(t.Context(), e, "POST", msgs))
			var api *APIError
			if cls, wait := Classify(first.err); !errors.As(first.err, &api) || cls != Blocked || wait != 90*time.Second {
				t.Fatalf("err = %v: class %s, wait %s; want blocked for 90s", first.err, cls, wait)
			}
			h := e.Health()
			if !h.EdgeBlockedUntil.Equal(d.clk.Now().Add(90*time.Second)) || !strings.Contains(h.EdgeBlockedReason, tc.want) ||
				!strings.Contains(h.EdgeBlockedReason, "POST /channels/{channel_id}/messages") ||
				h.Err() == nil || !strings.Contains(h.Err().Error(), "Discord's edge (Cloudflare) blocked herald") || h.InvalidRequests != 1 {
				t.Fatalf("health %+v (%v)", h, h.Err())
			}
			next := d.send(t.Context(), e, "GET", "/channels/2")
			d.sleepers(1)
			d.clk.Advance(90*time.Second - time.Millisecond)
			d.quiet(1)
			d.clk.Advance(time.Millisecond)
			if c := finished(t, next); c.err != nil {
				t.Fatalf("after the wait: %v", c.err)
			}
		})
	}
	d := newDiscord(t, func(*http.Request, int) reply {
		return reply{status: 403, body: `{"message":"Missing Permissions","code":50013}`}
	})
	e := d.engine(Config{})
	if cls, _ := Classify(finished(t, d.send(t.Context(), e, "POST", msgs)).err); cls != Permission || e.Health().Err() != nil {
		t.Fatalf("50013: class %s, health %v", cls, e.Health().Err())
	}
}

// A header-less 429 comes from Discord's edge; when it names no wait (no
// usable retry_after nor Retry-After) the engine waits EdgeBlockWait, never
// nothing: retrying at once would only add invalid requests to the count
// that got the bot banned (Rate Limits, "Invalid Request Limit aka
// Cloudflare bans"). The default is that count's 10-minute window.
func TestHeaderless429WithoutAWaitWaitsTheFloor(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		cfg   Config
		body  string
		floor time.Duration
	}{
		{"JSON without retry_after", Config{EdgeBlockWait: 3 * time.Minute}, `{"code":0,"message":"You are being blocked from accessing our API temporarily due to exceeding our rate limits frequently."}`, 3 * time.Minute},
		{"an HTML page, default floor", Config{}, `<html><body>error code: 1015</body></html>`, 10 * time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := newDiscord(t, func(r *http.Request, n int) reply {
				if n == 1 {
					return reply{status: 429, body: tc.body}
				}
				return ok()
			})
			e := d.engine(tc.cfg)
			first := d.send(t.Context(), e, "POST", msgs)
			d.waitRequests(1)
			d.sleepers(1)
			h := e.Health()
			if !h.EdgeBlockedUntil.Equal(d.clk.Now().Add(tc.floor)) || !strings.Contains(h.EdgeBlockedReason, "named no wait") {
				t.Fatalf("health %+v", h)
			}
			d.clk.Advance(tc.floor - time.Millisecond)
			d.quiet(1)
			d.clk.Advance(time.Millisecond)
			if c := finished(t, first); c.err != nil || len(d.requests()) != 2 {
				t.Fatalf("after the floor: %v, %d requests", c.err, len(d.requests()))
			}
		})
	}
}
