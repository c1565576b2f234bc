package rest

import (
	"context"
	"net/http"

	"github.com/bwmarrin/discordgo"
)

// ActiveThreads lists the guild's active (unarchived) threads the bot
// can see, public and private, newest first (GET
// /guilds/{guild.id}/threads/active). A job whose thread create may
// have landed before its answer was lost looks here before creating
// again.
func (c *Client) ActiveThreads(ctx context.Context, guildID string) ([]*discordgo.Channel, error) {
	var out struct {
		Threads []*discordgo.Channel `json:"threads"`
	}
	err := c.do(ctx, call{method: http.MethodGet, path: path("guilds", guildID, "threads", "active")}, &out)
	return out.Threads, err
}
