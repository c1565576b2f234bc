package webhookproxy_test

import (
	"net/http"
	"strings"
	"testing"
)

// With keys configured only callers with a key are relayed; everything
// else is 403 Missing Access with nothing stored. The operations
// endpoints need the admin key, and show webhooks without their tokens.
func TestServiceKeys(t *testing.T) {
	t.Parallel()
	const key = "alerting-key-0123456789"
	p := start(t, map[string]string{"HERALD_PROXY_KEYS": "alerting=" + key + ",ci=other-key-0123456789"})
	body := []byte(`{"content":"hi"}`)
	bearer := map[string]string{"Authorization": "Bearer " + key}
	for name, a := range map[string]answer{
		"no key":       p.send(t, http.MethodPost, "/api/webhooks/"+p.hook+"/"+p.token, "application/json", body, nil),
		"wrong key":    p.send(t, http.MethodPost, "/api/webhooks/"+p.hook+"/"+p.token, "application/json", body, map[string]string{"Authorization": "Bearer nope"}),
		"admin no key": p.send(t, http.MethodGet, "/proxy/targets", "", nil, bearer),
	} {
		if a.status != http.StatusForbidden || a.json(t)["code"] != float64(50001) {
			t.Errorf("%s: %d %s, want 403 Missing Access", name, a.status, a.body)
		}
	}
	if n := p.count(t, `SELECT count(*) FROM webhookproxy_deliveries`); n != 0 {
		t.Fatalf("%d deliveries stored from refused requests", n)
	}
	if a := p.send(t, http.MethodPost, "/api/webhooks/"+p.hook+"/"+p.token+"?wait=true", "application/json", body, bearer); a.status != http.StatusOK {
		t.Fatalf("allowed request: %d %s", a.status, a.body)
	}
	if n := p.count(t, `SELECT count(*) FROM webhookproxy_deliveries WHERE service = 'alerting'`); n != 1 {
		t.Errorf("the delivery is not recorded under its service")
	}
	a := p.admin(t, http.MethodGet, "/proxy/targets")
	if a.status != http.StatusOK || strings.Contains(string(a.body), p.token) || !strings.Contains(string(a.body), p.hook) {
		t.Errorf("targets: %d %s", a.status, a.body)
	}
	// A service follows its own deliveries, and no other's.
	var id string
	p.DB.QueryRow(t.Context(), `SELECT id::text FROM webhookproxy_deliveries`).Scan(&id)
	if a := p.send(t, http.MethodGet, "/proxy/deliveries/"+id, "", nil, bearer); a.status != http.StatusOK || a.json(t)["state"] != "delivered" {
		t.Errorf("own delivery: %d %s", a.status, a.body)
	}
	if a := p.send(t, http.MethodGet, "/proxy/deliveries/"+id, "", nil, map[string]string{"Authorization": "Bearer other-key-0123456789"}); a.status != http.StatusNotFound {
		t.Errorf("another service's delivery: %d %s", a.status, a.body)
	}
}

// A webhook the allowlist does not name is refused, and nothing stored.
func TestAllowlist(t *testing.T) {
	t.Parallel()
	p := start(t, map[string]string{"HERALD_PROXY_ALLOW": "1100000000000000001"})
	a := p.execute(t, "", map[string]any{"content": "hi"})
	if a.status != http.StatusForbidden || a.json(t)["code"] != float64(50001) {
		t.Errorf("%d %s, want 403 Missing Access", a.status, a.body)
	}
	if n := p.count(t, `SELECT count(*) FROM webhookproxy_deliveries`); n != 0 {
		t.Errorf("%d deliveries stored", n)
	}
}

// A token the proxy has not seen is asked about once (GET Webhook with
// Token) before anything is stored; a wrong one is refused as Discord
// refuses it, stored nowhere, and refused again without asking, so a
// wrong token costs Discord one request at most and the webhook nothing.
func TestWrongTokenRefused(t *testing.T) {
	t.Parallel()
	p := start(t, nil)
	if a := p.execute(t, "?wait=true", map[string]any{"content": "good"}); a.status != http.StatusOK {
		t.Fatalf("%d %s", a.status, a.body)
	}
	if n := p.count(t, `SELECT count(*) FROM webhookproxy_webhooks WHERE guild_id IS NOT NULL`); n != 1 {
		t.Errorf("%d webhooks placed in their guild by the verification, want 1", n)
	}
	wrong := func() {
		t.Helper()
		a := p.send(t, http.MethodPost, "/api/webhooks/"+p.hook+"/not-the-token", "application/json", []byte(`{"content":"x"}`), nil)
		if a.status != http.StatusUnauthorized || a.json(t)["code"] != float64(50027) {
			t.Errorf("%d %s, want 401 Invalid Webhook Token", a.status, a.body)
		}
	}
	calls := len(p.Sim.Requests())
	wrong()
	wrong()
	asked := p.Sim.Requests()[calls:]
	if len(asked) != 1 || asked[0].Method+" "+asked[0].Route != "GET /webhooks/{webhook_id}/{webhook_token}" {
		t.Errorf("Discord saw %v for a wrong token sent twice, want one GET Webhook with Token", asked)
	}
	if n := p.count(t, `SELECT count(*) FROM webhookproxy_deliveries`); n != 1 {
		t.Errorf("%d deliveries stored, want the good one only", n)
	}
	if a := p.execute(t, "?wait=true", map[string]any{"content": "still good"}); a.status != http.StatusOK {
		t.Errorf("after: %d %s", a.status, a.body)
	}
}
