package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/bwmarrin/discordgo"

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

// heraldClient sends through a transport.Engine, as herald does.
type heraldClient struct {
	http  *http.Client
	token string
}

func newHeraldClient(w *world, appID string, scale float64) (*heraldClient, error) {
	e := transport.New(transport.Config{
		ApplicationID: appID,
		Base:          &http.Transport{MaxIdleConnsPerHost: 256},
		// Discord's global limit, on the simulator's scaled clock.
		GlobalPeriod: time.Duration(float64(time.Second) * scale),
	})
	rt, err := transport.Rewrite(e.RoundTripper(), w.url+"/api/v10")
	if err != nil {
		return nil, err
	}
	return &heraldClient{http: &http.Client{Transport: rt}, token: w.token}, nil
}

func (c *heraldClient) do(ctx context.Context, method, path, body string, bot bool) error {
	req, err := http.NewRequestWithContext(ctx, method, "https://discord.com/api/v10"+path, bytes.NewReader([]byte(body)))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if bot {
		req.Header.Set("Authorization", "Bot "+c.token)
	}
	res, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	io.Copy(io.Discard, res.Body)
	if res.StatusCode >= 300 {
		return fmt.Errorf("%s %s: %d", method, path, res.StatusCode)
	}
	return nil
}

func (c *heraldClient) edit(ctx context.Context, ch, msg string) error {
	return c.do(ctx, "PATCH", "/channels/"+ch+"/messages/"+msg, `{"content":"edited"}`, true)
}

func (c *heraldClient) addRole(ctx context.Context, g, u, r string) error {
	return c.do(ctx, "PUT", "/guilds/"+g+"/members/"+u+"/roles/"+r, "", true)
}

func (c *heraldClient) followup(ctx context.Context, app, token string) error {
	return c.do(ctx, "POST", "/webhooks/"+app+"/"+token+"?wait=true", `{"content":"done"}`, false)
}

func (c *heraldClient) create(ctx context.Context, ch string) error {
	return c.do(ctx, "POST", "/channels/"+ch+"/messages", `{"content":"hello"}`, true)
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
