package rest_test

import (
	"errors"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/discord/rest"
	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/discord/transport"
)

func TestWebhooks(t *testing.T) {
	t.Parallel()
	w := newWorld(t, sim.DefaultFixture())
	ctx := t.Context()
	ch := w.g.Channel("general")
	hook, err := w.c.CreateWebhook(ctx, ch, "alerts", "webhook proxy")
	if err != nil || hook.Token == "" {
		t.Fatalf("webhook = %+v, %v", hook, err)
	}
	if got, err := w.c.Webhook(ctx, hook.ID); err != nil || got.ChannelID != ch {
		t.Errorf("by id = %+v, %v", got, err)
	}
	if got, err := w.c.WebhookWithToken(ctx, hook.ID, hook.Token); err != nil || got.ID != hook.ID || got.User != nil {
		t.Errorf("with token = %+v, %v", got, err)
	}
	m, err := w.c.ExecuteWebhook(ctx, hook.ID, hook.Token, rest.WebhookMessage{Content: "disk full", Username: "Alertmanager"},
		rest.ExecuteOptions{Wait: true})
	if err != nil || m.Author.Username != "Alertmanager" {
		t.Fatalf("execute = %+v, %v", m, err)
	}
	if none, err := w.c.ExecuteWebhook(ctx, hook.ID, hook.Token, rest.WebhookMessage{Content: "no wait"}, rest.ExecuteOptions{}); err != nil || none != nil {
		t.Errorf("without wait = %v, %v; want no message", none, err)
	}
	th, err := w.c.CreateThread(ctx, ch, rest.NewThread{Name: "incidents", Type: discordgo.ChannelTypeGuildPublicThread}, "")
	if err != nil {
		t.Fatal(err)
	}
	inThread, err := w.c.ExecuteWebhook(ctx, hook.ID, hook.Token, rest.WebhookMessage{Content: "in the thread"},
		rest.ExecuteOptions{Wait: true, ThreadID: th.ID})
	if err != nil || inThread.ChannelID != th.ID {
		t.Errorf("thread_id = %+v, %v", inThread, err)
	}
	content := "disk full (resolved)"
	if _, err := w.c.EditWebhookMessage(ctx, hook.ID, hook.Token, m.ID, rest.MessageEdit{Content: &content}); err != nil {
		t.Fatal(err)
	}
	if got, err := w.c.WebhookMessage(ctx, hook.ID, hook.Token, m.ID); err != nil || got.Content != content {
		t.Errorf("after edit = %+v, %v", got, err)
	}
	if err := w.c.DeleteWebhookMessage(ctx, hook.ID, hook.Token, m.ID); err != nil {
		t.Fatal(err)
	}
	var api *transport.APIError
	if _, err := w.c.ExecuteWebhook(ctx, hook.ID, "wrong-token", rest.WebhookMessage{Content: "x"}, rest.ExecuteOptions{Wait: true}); !errors.As(err, &api) || api.Class() != transport.NotFound {
		t.Errorf("a wrong token: %v, want not found", err)
	}
}
