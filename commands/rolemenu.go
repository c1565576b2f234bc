package commands

import (
	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/i18n"
)

// RoleMenu declares /rolemenu, for members who may manage roles. Paths and
// option names are the public interface documentation and outside tests
// drive: /rolemenu create name:<text> [style] [mode] [description],
// /rolemenu option add|edit|remove, /rolemenu publish menu channel,
// /rolemenu status, and the rest below.
func RoleMenu(c *i18n.Catalog) []*discordgo.ApplicationCommand {
	b := NewBuilder(c)
	// menu options name a menu of the guild, offered by autocomplete.
	menuAt := func(path string) *discordgo.ApplicationCommandOption {
		o := b.Option(path, discordgo.ApplicationCommandOptionString, true)
		o.Autocomplete = true
		return o
	}
	menu := func(sub string) *discordgo.ApplicationCommandOption { return menuAt(sub + " menu") }
	text := func(path string, required bool, max int) *discordgo.ApplicationCommandOption {
		o := b.Option(path, discordgo.ApplicationCommandOptionString, required)
		o.MaxLength = max
		return o
	}
	choices := func(o *discordgo.ApplicationCommandOption, values ...string) *discordgo.ApplicationCommandOption {
		for _, v := range values {
			o.Choices = append(o.Choices, &discordgo.ApplicationCommandOptionChoice{Name: v, Value: v})
		}
		return o
	}
	channel := func(path string) *discordgo.ApplicationCommandOption {
		o := b.Option(path, discordgo.ApplicationCommandOptionChannel, true)
		o.ChannelTypes = []discordgo.ChannelType{discordgo.ChannelTypeGuildText, discordgo.ChannelTypeGuildNews}
		return o
	}
	picks := func(path string) *discordgo.ApplicationCommandOption {
		o := b.Option(path, discordgo.ApplicationCommandOptionInteger, false)
		lo, hi := 0.0, 25.0
		o.MinValue, o.MaxValue = &lo, hi
		return o
	}
	role := func(path string, required bool) *discordgo.ApplicationCommandOption {
		return b.Option(path, discordgo.ApplicationCommandOptionRole, required)
	}
	return []*discordgo.ApplicationCommand{
		b.Command("rolemenu", discordgo.PermissionManageRoles,
			b.Sub("rolemenu create",
				text("rolemenu create name", true, 50),
				choices(b.Option("rolemenu create style", discordgo.ApplicationCommandOptionString, false), "buttons", "select"),
				choices(b.Option("rolemenu create mode", discordgo.ApplicationCommandOptionString, false), "toggle", "unique", "verify", "drop"),
				text("rolemenu create description", false, 1000)),
			b.Group("rolemenu option",
				b.Sub("rolemenu option add", menu("rolemenu option add"), role("rolemenu option add role", true),
					text("rolemenu option add label", false, 80), text("rolemenu option add emoji", false, 64),
					text("rolemenu option add description", false, 100)),
				b.Sub("rolemenu option edit", menu("rolemenu option edit"), role("rolemenu option edit role", true),
					text("rolemenu option edit label", false, 80), text("rolemenu option edit emoji", false, 64),
					text("rolemenu option edit description", false, 100)),
				b.Sub("rolemenu option remove", menu("rolemenu option remove"), role("rolemenu option remove role", true))),
			b.Group("rolemenu set",
				b.Sub("rolemenu set mode", menu("rolemenu set mode"),
					choices(b.Option("rolemenu set mode mode", discordgo.ApplicationCommandOptionString, true), "toggle", "unique", "verify", "drop")),
				b.Sub("rolemenu set picks", menu("rolemenu set picks"), picks("rolemenu set picks min"), picks("rolemenu set picks max")),
				b.Sub("rolemenu set required-role", menu("rolemenu set required-role"), role("rolemenu set required-role role", false)),
				b.Sub("rolemenu set blocked-role", menu("rolemenu set blocked-role"), role("rolemenu set blocked-role role", true),
					b.Option("rolemenu set blocked-role blocked", discordgo.ApplicationCommandOptionBoolean, true)),
				b.Sub("rolemenu set temporary", menu("rolemenu set temporary"), text("rolemenu set temporary duration", true, 20)),
				b.Sub("rolemenu set link", menu("rolemenu set link"), menuAt("rolemenu set link with")),
				b.Sub("rolemenu set dangerous-roles", b.Option("rolemenu set dangerous-roles allow", discordgo.ApplicationCommandOptionBoolean, true))),
			b.Sub("rolemenu publish", menu("rolemenu publish"), channel("rolemenu publish channel")),
			b.Sub("rolemenu republish", menu("rolemenu republish")),
			b.Sub("rolemenu publish-all"),
			b.Sub("rolemenu move", menu("rolemenu move"), channel("rolemenu move channel")),
			b.Sub("rolemenu delete", menu("rolemenu delete")),
			b.Sub("rolemenu list"),
			b.Sub("rolemenu status")),
	}
}
