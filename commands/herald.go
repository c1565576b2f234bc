package commands

import (
	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/i18n"
)

// Herald declares /herald, herald's admin command: /herald jobs and
// /herald status.
func Herald(c *i18n.Catalog) []*discordgo.ApplicationCommand {
	b := NewBuilder(c)
	return []*discordgo.ApplicationCommand{
		b.Command("herald", discordgo.PermissionManageGuild, b.Sub("herald jobs"), b.Sub("herald status")),
	}
}
