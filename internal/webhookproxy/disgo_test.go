package webhookproxy_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/disgoorg/disgo/discord"
	disgorest "github.com/disgoorg/disgo/rest"
	"github.com/disgoorg/disgo/webhook"
	"github.com/disgoorg/snowflake/v2"
)

// disgo's webhook client, given the proxy as its base URL, works as it
// does against Discord: messages with embeds and files come back, and a
// refusal is its typed error with Discord's code.
func TestDisgoWebhookClient(t *testing.T) {
	t.Parallel()
	p := start(t, nil)
	c := webhook.New(snowflake.MustParse(p.hook), p.token,
		webhook.WithRestClientConfigOpts(disgorest.WithURL(p.base()+"/api/v10")))
	defer c.Close(context.Background())

	m, err := c.CreateMessage(discord.NewWebhookMessageCreateBuilder().
		SetContent("deploy finished").
		AddEmbeds(discord.NewEmbedBuilder().SetTitle("build #7").Build()).
		AddFiles(discord.NewFile("log.txt", "", strings.NewReader("ok"))).
		Build())
	if err != nil {
		t.Fatal(err)
	}
	if m.Content != "deploy finished" || len(m.Embeds) != 1 || len(m.Attachments) != 1 || m.WebhookID == nil || m.WebhookID.String() != p.hook {
		t.Errorf("message %+v", m)
	}
	_, err = c.CreateContent(strings.Repeat("x", 2001))
	var rerr disgorest.Error
	if !errors.As(err, &rerr) || rerr.Code != 50035 {
		t.Errorf("oversized content: %v, want disgo's rest.Error with code 50035", err)
	}
}
