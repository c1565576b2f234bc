package webhookproxy_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/discord/transport"
	"github.com/herald-bot/herald/internal/heraldtest"
)

// A Discord client library works unchanged apart from the host:
// discordgo's WebhookExecute, pointed at the proxy, gets its message.
func TestDiscordClientLibrary(t *testing.T) {
	t.Parallel()
	p := start(t, nil)
	rt, err := transport.Rewrite(http.DefaultTransport, p.base()+"/api/v9")
	if err != nil {
		t.Fatal(err)
	}
	s, _ := discordgo.New("")
	s.Client = &http.Client{Transport: rt}
	m, err := s.WebhookExecute(p.hook, p.token, true, &discordgo.WebhookParams{Content: "from discordgo", Username: "lib"})
	if err != nil {
		t.Fatal(err)
	}
	if m.Content != "from discordgo" || m.Author.Username != "lib" || m.WebhookID != p.hook {
		t.Errorf("message %+v", m)
	}
	_, err = s.WebhookExecute(p.hook, p.token, false, &discordgo.WebhookParams{Content: strings.Repeat("x", 2001)})
	var rest *discordgo.RESTError
	if !errors.As(err, &rest) || rest.Message == nil || rest.Message.Code != 50035 {
		t.Errorf("oversized content: %v, want discordgo's RESTError with code 50035", err)
	}
}

// A wait Discord announces longer than a job may hold its worker
// snoozes the target's job until then: the target shows it waits, and
// Discord never has to answer 429.
func TestRateLimitWaits(t *testing.T) {
	t.Parallel()
	p := start(t, nil)
	p.Sim.SetLimits(sim.LimitChange{Route: executeRoute, Limit: 1, WindowMS: 3000})
	for _, c := range []string{"first", "second"} {
		if a := p.execute(t, "", map[string]any{"content": c}); a.status != http.StatusNoContent {
			t.Fatalf("%d %s", a.status, a.body)
		}
	}
	p.Eventually("the target waiting for the rate limit", func() bool {
		return strings.Contains(string(p.admin(t, http.MethodGet, "/proxy/targets").body), `"wait_reason":"rate_limited"`)
	})
	p.Eventually("both delivered", func() bool { return len(p.byWebhook(p.Channel("general"), p.hook)) == 2 })
	for _, r := range p.Sim.Requests() {
		if r.Status == http.StatusTooManyRequests {
			t.Errorf("Discord answered 429 to %s", r.Route)
		}
	}
}

// /herald proxy shows admins the queues as GET /proxy/targets does, in
// their language, without tokens.
func TestProxyCommand(t *testing.T) {
	t.Parallel()
	f := sim.DefaultFixture()
	f.Roles = append(f.Roles, sim.FixtureRole{Name: "Admin", Permissions: "32", Position: 11})
	f.Members = append(f.Members, sim.FixtureMember{Username: "erin", Roles: []string{"Admin"}})
	p := start(t, nil, heraldtest.WithFixture(f))
	p.execute(t, "?wait=true", map[string]any{"content": "hi"})
	gone, token := p.webhook(t, p.Channel("general"))
	p.send(t, http.MethodPost, "/api/webhooks/"+gone+"/"+token+"?wait=true", "application/json", []byte(`{"content":"x"}`), nil)
	p.Sim.Do(http.MethodDelete, "/webhooks/"+gone, nil)
	p.send(t, http.MethodPost, "/api/webhooks/"+gone+"/"+token+"?wait=true", "application/json", []byte(`{"content":"y"}`), nil)

	reply := p.As("erin").Locale("de").Command("general", "/herald/proxy", nil).Reply()
	if !strings.Contains(reply.Content, "Webhook-Proxy: 2 Warteschlangen, 1 Fehlzustellungen") ||
		!strings.Contains(reply.Content, gone) || !strings.Contains(reply.Content, "Webhook wurde gelöscht") ||
		reply.Flags&discordgo.MessageFlagsEphemeral == 0 || strings.Contains(reply.Content, p.token) {
		t.Errorf("report %q (flags %d)", reply.Content, reply.Flags)
	}
	if refused := p.As("bob").Command("general", "/herald/proxy", nil).Reply(); !strings.Contains(refused.Content, "Manage Server") {
		t.Errorf("a member without Manage Server got %q", refused.Content)
	}
}

// The metrics count acceptance, delivery and its latency, and show what
// is pending per caller, labelled from the configured keys only.
func TestMetrics(t *testing.T) {
	t.Parallel()
	p := start(t, nil)
	p.Sim.SetFault(sim.Fault{Route: executeRoute, LatencyMS: 2000})
	p.execute(t, "", map[string]any{"content": "one"})
	var m string
	p.Eventually("depth shown", func() bool {
		m = p.Metrics()
		return strings.Contains(m, `herald_webhookproxy_queued{key="keyless"} 1`)
	})
	p.Eventually("delivered", func() bool {
		m = p.Metrics()
		return strings.Contains(m, "herald_webhookproxy_delivered_total 1")
	})
	for _, want := range []string{"herald_webhookproxy_accepted_total 1", "herald_webhookproxy_delivery_seconds_count 1", "herald_webhookproxy_accept_batch_count 1"} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %q:\n%s", want, grep(m, "webhookproxy"))
		}
	}
	if strings.Contains(m, p.token) || strings.Contains(m, p.hook) {
		t.Error("a token or webhook id is in the metrics")
	}
}
