package rest_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/discord/rest"
	"github.com/herald-bot/herald/internal/discord/sim"
)

// A relayed body reaches Discord byte for byte, JSON or multipart, and
// the created message comes back as Discord encoded it; the Slack
// variant answers no message.
func TestRelayWebhook(t *testing.T) {
	t.Parallel()
	w := newWorld(t, sim.DefaultFixture())
	ctx := t.Context()
	hook, err := w.c.CreateWebhook(ctx, w.g.Channel("general"), "alerts", "")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := w.c.RelayWebhook(ctx, rest.RelayedExecute{WebhookID: hook.ID, Token: hook.Token, ContentType: "application/json",
		Body: []byte(`{"content":"relayed","username":"CI"}`)})
	var m discordgo.Message
	if err != nil || json.Unmarshal(raw, &m) != nil || m.Content != "relayed" || m.Author.Username != "CI" {
		t.Fatalf("relay = %s, %v", raw, err)
	}
	ct, body, err := discordgo.MultipartBodyWithJSON(map[string]string{"content": "with a file"},
		[]*discordgo.File{{Name: "a.txt", ContentType: "text/plain", Reader: strings.NewReader("alpha")}})
	if err != nil {
		t.Fatal(err)
	}
	raw, err = w.c.RelayWebhook(ctx, rest.RelayedExecute{WebhookID: hook.ID, Token: hook.Token, ContentType: ct, Body: body})
	if err != nil || json.Unmarshal(raw, &m) != nil || len(m.Attachments) != 1 {
		t.Fatalf("multipart relay = %s, %v", raw, err)
	}
	raw, err = w.c.RelayWebhook(ctx, rest.RelayedExecute{WebhookID: hook.ID, Token: hook.Token, Variant: "slack", ContentType: "application/json",
		Body: []byte(`{"text":"from slack"}`)})
	if err != nil || raw != nil {
		t.Errorf("slack relay = %s, %v; want no message", raw, err)
	}
}
