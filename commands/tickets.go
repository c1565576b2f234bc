package commands

import (
	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/i18n"
)

// Tickets declares /tickets, for members who may manage the server, and
// /ticket, used inside a ticket by its staff and its opener. Paths and
// option names are the public interface documentation and outside tests
// drive: /tickets setup support-role:<role> [mode] [channel] [category]
// [log-channel] [notify-channel], /tickets panel channel:<channel>
// [title], /tickets form panel:<panel> [question-1..5], /ticket close
// [reason], /ticket claim, /ticket add|remove member:<user>, /ticket
// transcript, and the rest below.
func Tickets(c *i18n.Catalog) []*discordgo.ApplicationCommand {
	b := NewBuilder(c)
	text := func(path string, required bool, max int) *discordgo.ApplicationCommandOption {
		o := b.Option(path, discordgo.ApplicationCommandOptionString, required)
		o.MaxLength = max
		return o
	}
	channel := func(path string, required bool, types ...discordgo.ChannelType) *discordgo.ApplicationCommandOption {
		o := b.Option(path, discordgo.ApplicationCommandOptionChannel, required)
		o.ChannelTypes = types
		return o
	}
	textChannel := func(path string, required bool) *discordgo.ApplicationCommandOption {
		return channel(path, required, discordgo.ChannelTypeGuildText)
	}
	integer := func(path string, lo, hi float64) *discordgo.ApplicationCommandOption {
		o := b.Option(path, discordgo.ApplicationCommandOptionInteger, false)
		o.MinValue, o.MaxValue = &lo, hi
		return o
	}
	choices := func(o *discordgo.ApplicationCommandOption, values ...string) *discordgo.ApplicationCommandOption {
		for _, v := range values {
			o.Choices = append(o.Choices, &discordgo.ApplicationCommandOptionChoice{Name: v, Value: v})
		}
		return o
	}
	panel := func(path string) *discordgo.ApplicationCommandOption {
		o := b.Option(path, discordgo.ApplicationCommandOptionString, true)
		o.Autocomplete = true
		return o
	}
	member := func(path string) *discordgo.ApplicationCommandOption {
		return b.Option(path, discordgo.ApplicationCommandOptionUser, true)
	}
	return []*discordgo.ApplicationCommand{
		b.Command("tickets", discordgo.PermissionManageGuild,
			b.Sub("tickets setup",
				b.Option("tickets setup support-role", discordgo.ApplicationCommandOptionRole, true),
				choices(b.Option("tickets setup mode", discordgo.ApplicationCommandOptionString, false), "thread", "channel"),
				textChannel("tickets setup channel", false),
				channel("tickets setup category", false, discordgo.ChannelTypeGuildCategory),
				textChannel("tickets setup log-channel", false),
				textChannel("tickets setup notify-channel", false)),
			b.Sub("tickets settings",
				integer("tickets settings limit", 1, 10),
				integer("tickets settings cooldown", 0, 86400),
				integer("tickets settings inactivity", 0, 720),
				b.Option("tickets settings close-on-leave", discordgo.ApplicationCommandOptionBoolean, false),
				b.Option("tickets settings dm-transcripts", discordgo.ApplicationCommandOptionBoolean, false),
				choices(b.Option("tickets settings naming", discordgo.ApplicationCommandOptionString, false), "number", "username"),
				text("tickets settings welcome", false, 1000)),
			b.Sub("tickets panel", textChannel("tickets panel channel", true), text("tickets panel title", false, 100)),
			b.Group("tickets topic",
				b.Sub("tickets topic add", panel("tickets topic add panel"), text("tickets topic add label", true, 80)),
				b.Sub("tickets topic remove", panel("tickets topic remove panel"), text("tickets topic remove label", true, 80))),
			b.Sub("tickets form", panel("tickets form panel"),
				text("tickets form question-1", false, 45), text("tickets form question-2", false, 45),
				text("tickets form question-3", false, 45), text("tickets form question-4", false, 45),
				text("tickets form question-5", false, 45)),
			b.Sub("tickets stats"),
			b.Group("tickets panels", b.Sub("tickets panels republish"))),
		b.Command("ticket", 0,
			b.Sub("ticket close", text("ticket close reason", false, 500)),
			b.Sub("ticket close-request", text("ticket close-request reason", false, 500)),
			b.Sub("ticket claim"),
			b.Sub("ticket unclaim"),
			b.Sub("ticket add", member("ticket add member")),
			b.Sub("ticket remove", member("ticket remove member")),
			b.Sub("ticket transfer", member("ticket transfer member")),
			b.Sub("ticket rename", text("ticket rename name", true, 90)),
			b.Sub("ticket transcript", integer("ticket transcript number", 1, 1e9)),
			b.Sub("ticket reopen"),
			b.Sub("ticket info")),
	}
}
