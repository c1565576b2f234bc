package webhookproxy_test

import (
	"net/http"
	"strconv"
	"testing"

	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/heraldtest"
)

// While Postgres is unreachable every request is answered 503 with
// Retry-After and none 2xx; once it is back, what was answered 204 is
// delivered, and only that.
func TestPostgresOutage(t *testing.T) {
	t.Parallel()
	p := start(t, nil, heraldtest.WithDatabaseProxy())
	p.DBProxy.Cut()
	for i := range 5 {
		a := p.execute(t, "", map[string]any{"content": "during " + strconv.Itoa(i)})
		if a.status != http.StatusServiceUnavailable || a.header.Get("Retry-After") == "" {
			t.Fatalf("during the outage: %d %s (Retry-After %q), want 503 with Retry-After", a.status, a.body, a.header.Get("Retry-After"))
		}
	}
	p.DBProxy.Restore()
	acked := 0
	p.Eventually("requests accepted again", func() bool {
		if p.execute(t, "", map[string]any{"content": "after " + strconv.Itoa(acked)}).status == http.StatusNoContent {
			acked++
		}
		return acked == 3
	})
	p.Eventually("the acknowledged messages", func() bool { return len(p.byWebhook(p.Channel("general"), p.hook)) == 3 })
	for _, m := range p.byWebhook(p.Channel("general"), p.hook) {
		if m.Content[:5] != "after" {
			t.Errorf("delivered %q, which was never acknowledged", m.Content)
		}
	}
}

// ?wait=true answers 202 with the delivery's id when the delivery takes
// longer than the wait timeout; the id then shows the delivery.
func TestWaitTimeout(t *testing.T) {
	t.Parallel()
	p := start(t, map[string]string{"HERALD_PROXY_WAIT_TIMEOUT": "300ms"})
	p.Sim.SetFault(sim.Fault{Route: "POST /webhooks/{webhook_id}/{webhook_token}", LatencyMS: 1500})
	a := p.execute(t, "?wait=true", map[string]any{"content": "slow"})
	if a.status != http.StatusAccepted {
		t.Fatalf("%d %s, want 202", a.status, a.body)
	}
	id, _ := a.json(t)["id"].(string)
	p.Eventually("the delivery delivered", func() bool {
		st := p.admin(t, http.MethodGet, "/proxy/deliveries/"+id)
		return st.status == http.StatusOK && st.json(t)["state"] == "delivered"
	})
	st := p.admin(t, http.MethodGet, "/proxy/deliveries/"+id).json(t)
	if st["webhook_id"] != p.hook || st["token_fingerprint"] == "" || st["message"] == nil {
		t.Errorf("status %v", st)
	}
}

// A target at its depth bound refuses with 429 and Retry-After, as
// Discord's rate limit does, and stores nothing more.
func TestQueueFull(t *testing.T) {
	t.Parallel()
	p := start(t, map[string]string{"HERALD_PROXY_MAX_DEPTH": "2"})
	p.Sim.SetFault(sim.Fault{Route: "POST /webhooks/{webhook_id}/{webhook_token}", LatencyMS: 3000})
	for i := range 2 {
		if a := p.execute(t, "", map[string]any{"content": strconv.Itoa(i)}); a.status != http.StatusNoContent {
			t.Fatalf("request %d: %d %s", i, a.status, a.body)
		}
	}
	a := p.execute(t, "", map[string]any{"content": "one too many"})
	if a.status != http.StatusTooManyRequests || a.header.Get("Retry-After") == "" || a.json(t)["retry_after"] == nil {
		t.Fatalf("%d %s, want 429 with Retry-After", a.status, a.body)
	}
	if n := p.count(t, `SELECT count(*) FROM webhookproxy_deliveries`); n != 2 {
		t.Errorf("%d deliveries stored, want 2", n)
	}
	p.Eventually("both delivered", func() bool { return len(p.byWebhook(p.Channel("general"), p.hook)) == 2 })
	if a := p.execute(t, "", map[string]any{"content": "room again"}); a.status != http.StatusNoContent {
		t.Errorf("after the queue drained: %d %s", a.status, a.body)
	}
}
