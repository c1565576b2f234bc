package bench

import (
	"context"
	"net/http"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/discord/rest"
	"github.com/herald-bot/herald/internal/discord/transport"
)

// client is one way of sending Discord REST calls: herald's transport
// engine, or discordgo's own REST methods and limiter.
type client interface {
	edit(ctx context.Context, channelID, messageID string) error
	addRole(ctx context.Context, guildID, userID, roleID string) error
	followup(ctx context.Context, appID, token string) error
	create(ctx context.Context, channelID string) error
}

// heraldClient sends through herald's REST client and transport engine.
type heraldClient struct{ discord *rest.Client }

func newHeraldClient(w *world, appID string, global int, scale float64) *heraldClient {
	return engineClient(w, appID, benchEngine(appID, global, scale))
}

// benchEngine is herald's engine as the benches configure it.
func benchEngine(appID string, global int, scale float64) *transport.Engine {
	return transport.New(transport.Config{
		ApplicationID: appID,
		Base:          &http.Transport{MaxIdleConnsPerHost: 256},
		// The bot's global limit, on the simulator's scaled clock.
		GlobalLimit:  global,
		GlobalPeriod: time.Duration(float64(time.Second) * scale),
	})
}

func engineClient(w *world, appID string, e *transport.Engine) *heraldClient {
	return &heraldClient{discord: rest.New(e, w.url+"/api/v10", w.token, appID)}
}

func (c *heraldClient) edit(ctx context.Context, ch, msg string) error {
	content := "edited"
	_, err := c.discord.EditMessage(ctx, ch, msg, rest.MessageEdit{Content: &content})
	return err
}

func (c *heraldClient) addRole(ctx context.Context, g, u, r string) error {
	return c.discord.AddMemberRole(ctx, g, u, r, "")
}

// followup posts as the client's own application; appID is the same.
func (c *heraldClient) followup(ctx context.Context, _, token string) error {
	_, err := c.discord.CreateFollowup(ctx, token, rest.WebhookMessage{Content: "done"})
	return err
}

func (c *heraldClient) create(ctx context.Context, ch string) error {
	_, err := c.discord.CreateMessage(ctx, ch, rest.NewMessage{Content: "hello"})
	return err
}

// discordgoClient is stock discordgo v0.29.0: its default limiter, retry
// and 429 settings, pointed at the simulator.
type discordgoClient struct{ s *discordgo.Session }

func newDiscordgoClient(w *world) (*discordgoClient, error) {
	s, err := discordgo.New("Bot " + w.token)
	if err != nil {
		return nil, err
	}
	rt, err := transport.Rewrite(&http.Transport{MaxIdleConnsPerHost: 256}, w.url+"/api/v10")
	if err != nil {
		return nil, err
	}
	s.Client = &http.Client{Transport: rt, Timeout: 20 * time.Second}
	return &discordgoClient{s: s}, nil
}

func (c *discordgoClient) edit(ctx context.Context, ch, msg string) error {
	_, err := c.s.ChannelMessageEdit(ch, msg, "edited", discordgo.WithContext(ctx))
	return err
}

func (c *discordgoClient) addRole(ctx context.Context, g, u, r string) error {
	return c.s.GuildMemberRoleAdd(g, u, r, discordgo.WithContext(ctx))
}

func (c *discordgoClient) followup(ctx context.Context, app, token string) error {
	_, err := c.s.FollowupMessageCreate(&discordgo.Interaction{AppID: app, Token: token}, true,
		&discordgo.WebhookParams{Content: "done"}, discordgo.WithContext(ctx))
	return err
}

func (c *discordgoClient) create(ctx context.Context, ch string) error {
	_, err := c.s.ChannelMessageSend(ch, "hello", discordgo.WithContext(ctx))
	return err
}
