package commands

import (
	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/i18n"
)

// Roles declares /roles, for members who may manage roles: /roles bulk
// add|remove role:<role> members-with:<role> gives or takes a role from
// every member who has another, as one bulk action with progress and
// Cancel; allow-dangerous:True is the server owner's consent to a role
// with dangerous permissions.
func Roles(c *i18n.Catalog) []*discordgo.ApplicationCommand {
	b := NewBuilder(c)
	role := func(path string) *discordgo.ApplicationCommandOption {
		return b.Option(path, discordgo.ApplicationCommandOptionRole, true)
	}
	return []*discordgo.ApplicationCommand{
		b.Command("roles", discordgo.PermissionManageRoles,
			b.Group("roles bulk",
				b.Sub("roles bulk add", role("roles bulk add role"), role("roles bulk add members-with"),
					b.Option("roles bulk add allow-dangerous", discordgo.ApplicationCommandOptionBoolean, false)),
				b.Sub("roles bulk remove", role("roles bulk remove role"), role("roles bulk remove members-with"),
					b.Option("roles bulk remove allow-dangerous", discordgo.ApplicationCommandOptionBoolean, false)))),
	}
}
