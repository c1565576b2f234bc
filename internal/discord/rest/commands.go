package rest

import (
	"context"
	"errors"
	"net/http"
	"net/url"

	"github.com/bwmarrin/discordgo"
)

// OverwriteCommands replaces the application's commands with cmds: in one
// guild (applies at once; for testing), or globally when guildID is "".
func (c *Client) OverwriteCommands(ctx context.Context, guildID string, cmds []*discordgo.ApplicationCommand) ([]*discordgo.ApplicationCommand, error) {
	p := path("applications", c.appID, "commands")
	if guildID != "" {
		p = path("applications", c.appID, "guilds", guildID, "commands")
	}
	if cmds == nil {
		cmds = []*discordgo.ApplicationCommand{}
	}
	var out []*discordgo.ApplicationCommand
	err := c.do(ctx, call{method: http.MethodPut, path: p, body: cmds}, &out)
	return out, err
}

// CurrentUser reads the bot's own user.
func (c *Client) CurrentUser(ctx context.Context) (*discordgo.User, error) {
	var out discordgo.User
	err := c.do(ctx, call{method: http.MethodGet, path: path("users", "@me")}, &out)
	return &out, err
}

// Commands lists the application's commands: in one guild, or global
// ones when guildID is "".
func (c *Client) Commands(ctx context.Context, guildID string) ([]*discordgo.ApplicationCommand, error) {
	p := path("applications", c.appID, "commands")
	if guildID != "" {
		p = path("applications", c.appID, "guilds", guildID, "commands")
	}
	q := url.Values{"with_localizations": {"true"}}
	var out []*discordgo.ApplicationCommand
	err := c.do(ctx, call{method: http.MethodGet, path: p, query: q}, &out)
	return out, err
}

// Application is the bot's application as Discord reports it.
type Application struct {
	ID   string
	Name string
	// BotUserID is the bot user's id. For applications made before
	// Discord gave bots their application's id it differs from ID.
	BotUserID string
	// Flags are Discord's application flags: among them the privileged
	// intents the owner switched on (see internal/discord/intents).
	Flags int64
	// VerifyKey is the hex Ed25519 public key Discord signs the
	// interactions it POSTs to the Interactions Endpoint URL with.
	VerifyKey string
}

// Application reads the bot's application: GET /applications/@me, which
// any bot token may call.
func (c *Client) Application(ctx context.Context) (Application, error) {
	var out struct {
		ID        string `json:"id"`
		Name      string `json:"name"`
		Flags     int64  `json:"flags"`
		VerifyKey string `json:"verify_key"`
		Bot       *struct {
			ID string `json:"id"`
		} `json:"bot"`
	}
	if err := c.do(ctx, call{method: http.MethodGet, path: path("applications", "@me")}, &out); err != nil {
		return Application{}, err
	}
	app := Application{ID: out.ID, Name: out.Name, Flags: out.Flags, VerifyKey: out.VerifyKey}
	if out.Bot != nil {
		app.BotUserID = out.Bot.ID
	}
	if app.ID == "" || app.BotUserID == "" {
		return Application{}, errors.New("discord: GET /applications/@me: the answer names no application or bot user")
	}
	return app, nil
}
