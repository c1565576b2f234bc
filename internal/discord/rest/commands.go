package rest

import (
	"context"
	"net/http"

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

// Application reads the bot's application.
func (c *Client) Application(ctx context.Context) (*discordgo.Application, error) {
	var out discordgo.Application
	err := c.do(ctx, call{method: http.MethodGet, path: path("applications", "@me")}, &out)
	return &out, err
}
