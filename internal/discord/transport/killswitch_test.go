package transport

import (
	"errors"
	"net/http"
	"strings"
	"testing"
)

const webhookTokenRejected = `{"message":"Invalid Webhook Token","code":50027}`

// Only a 401 to the bot token on a route the bot token authenticates stops
// all REST. discordgo sends Authorization on every call, so a webhook's or
// an interaction's 401 arrives with the bot token attached: it condemns
// that webhook or interaction, never the bot.
func TestTokenKillSwitches(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, method, path, auth, body string
		stops                          bool
	}{
		{"webhook execute through discordgo", "POST", "/webhooks/44/wrong", "Bot test-token", webhookTokenRejected, false},
		{"interaction callback through discordgo", "POST", "/interactions/1/expired/callback", "Bot test-token", webhookTokenRejected, false},
		{"follow-up through discordgo", "POST", "/webhooks/900/expired", "Bot test-token", webhookTokenRejected, false},
		{"@original edit through discordgo", "PATCH", "/webhooks/900/expired/messages/@original", "Bot test-token", webhookTokenRejected, false},
		{"webhook 401 without a code", "POST", "/webhooks/44/wrong", "Bot test-token", `{"message":"401: Unauthorized","code":0}`, false},
		{"webhook execute without a bot token", "POST", "/webhooks/44/wrong", "", webhookTokenRejected, false},
		{"an OAuth2 bearer token", "GET", "/users/@me", "Bearer user-token", `{"message":"401: Unauthorized","code":0}`, false},
		{"the bot token", "GET", "/users/@me", "Bot test-token", `{"message":"401: Unauthorized","code":0}`, true},
		{"the bot token, lower case", "GET", "/guilds/5/roles", "bot test-token", `{"message":"401: Unauthorized","code":0}`, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := newDiscord(t, func(r *http.Request, n int) reply {
				if r.URL.Path == "/api/v10/channels/1" {
					return ok()
				}
				return reply{status: 401, body: tc.body}
			})
			e := d.engine(Config{})
			first := finished(t, d.sendAuth(t.Context(), e, tc.method, tc.path, tc.auth))
			cls, _ := Classify(first.err)
			if tokenRoute := ParseRoute(tc.method, tc.path, "900").TokenAuth(); tokenRoute && cls != NotFound || !tokenRoute && cls != Unauthorized {
				t.Fatalf("err = %v, class %s", first.err, cls)
			}
			after := finished(t, d.send(t.Context(), e, "GET", "/channels/1"))
			h := e.Health()
			if !tc.stops {
				if after.err != nil || h.Unauthorized || h.Err() != nil {
					t.Fatalf("REST stopped: err = %v, health %+v", after.err, h)
				}
				return
			}
			if !errors.Is(after.err, ErrUnauthorized) || len(d.requests()) != 1 {
				t.Fatalf("after the bot token's 401: err = %v after %d requests", after.err, len(d.requests()))
			}
			if !h.Unauthorized || !h.UnauthorizedSince.Equal(d.clk.Now()) || h.Err() == nil ||
				!strings.Contains(h.UnauthorizedReason, tc.method+" ") || strings.Contains(h.UnauthorizedReason, "test-token") {
				t.Errorf("health = %+v", h)
			}
		})
	}
}

// A webhook is condemned only when Discord says the webhook itself is gone
// (10015 Unknown Webhook) or, for that token alone, that the token is
// wrong (50027 Invalid Webhook Token); a 404 about one of its messages, or
// without a code, leaves it usable.
func TestOnlyGoneWebhooksAreCondemned(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, method, path string
		status             int
		body               string
		dead               bool
	}{
		{"unknown message", "PATCH", "/webhooks/44/tok/messages/5", 404, `{"message":"Unknown Message","code":10008}`, false},
		{"unknown message on delete", "DELETE", "/webhooks/44/tok/messages/5", 404, `{"message":"Unknown Message","code":10008}`, false},
		{"404 without a code", "GET", "/webhooks/44", 404, `404 page not found`, false},
		{"unknown webhook", "POST", "/webhooks/44/tok", 404, `{"message":"Unknown Webhook","code":10015}`, true},
		{"unknown webhook on a message edit", "PATCH", "/webhooks/44/tok/messages/5", 404, `{"message":"Unknown Webhook","code":10015}`, true},
		{"invalid webhook token", "POST", "/webhooks/44/tok", 401, webhookTokenRejected, true},
		{"another token invalid", "POST", "/webhooks/44/wrong", 401, webhookTokenRejected, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := newDiscord(t, func(r *http.Request, n int) reply {
				if r.Method == tc.method && r.URL.Path == "/api/v10"+tc.path && n == 1 {
					return reply{status: tc.status, body: tc.body}
				}
				return ok()
			})
			e := d.engine(Config{})
			if c := finished(t, d.send(t.Context(), e, tc.method, tc.path)); c.err == nil {
				t.Fatal("no error")
			}
			c := finished(t, d.send(t.Context(), e, "POST", "/webhooks/44/tok"))
			sent := len(d.requests()) == 2
			if tc.dead == sent || (c.err == nil) != sent {
				t.Fatalf("dead %v: the webhook's next call sent %v, err = %v", tc.dead, sent, c.err)
			}
			if n := e.Health().DeadWebhooks; (n == 1) != (tc.dead || tc.body == webhookTokenRejected) {
				t.Errorf("health counts %d dead webhooks or tokens", n)
			}
		})
	}
}
