package commands

import (
	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/i18n"
)

// Herald declares /herald, herald's admin command: /herald jobs,
// /herald status and /herald board channel:.
func Herald(c *i18n.Catalog) []*discordgo.ApplicationCommand {
	b := NewBuilder(c)
	channel := b.Option("herald board channel", discordgo.ApplicationCommandOptionChannel, true)
	channel.ChannelTypes = []discordgo.ChannelType{discordgo.ChannelTypeGuildText, discordgo.ChannelTypeGuildNews}
	return []*discordgo.ApplicationCommand{
		b.Command("herald", discordgo.PermissionManageGuild, b.Sub("herald jobs"), b.Sub("herald status"),
			b.Sub("herald board", channel)),
	}
}
