// Package commands holds herald's application command definitions. Names
// and descriptions come from the locale catalogs, so every shipped
// language is registered with Discord; `herald register-commands`
// bulk-overwrites them.
package commands

import (
	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/i18n"
)

// ManageGuild is the permission herald's admin commands require, both as
// default_member_permissions (Discord hides the command) and in the
// handler (a server may override the default).
const ManageGuild = discordgo.PermissionManageGuild

// Herald is the /herald admin command's name; its handler is routed by it.
const Herald = "herald"

// Jobs is /herald's subcommand that reports herald's work.
const Jobs = "jobs"

// All returns every command with its localizations filled from c.
func All(c *i18n.Catalog) []*discordgo.ApplicationCommand {
	perms := int64(ManageGuild)
	noDM := false
	return []*discordgo.ApplicationCommand{{
		Name:                     Herald,
		NameLocalizations:        names(c, "command_herald.name"),
		Description:              c.For("en", "").T("command_herald.about", nil),
		DescriptionLocalizations: names(c, "command_herald.about"),
		DefaultMemberPermissions: &perms,
		DMPermission:             &noDM,
		Options: []*discordgo.ApplicationCommandOption{{
			Type:                     discordgo.ApplicationCommandOptionSubCommand,
			Name:                     Jobs,
			NameLocalizations:        *names(c, "command_herald_jobs.name"),
			Description:              c.For("en", "").T("command_herald_jobs.about", nil),
			DescriptionLocalizations: *names(c, "command_herald_jobs.about"),
		}},
	}}
}

func names(c *i18n.Catalog, key string) *map[discordgo.Locale]string {
	out := map[discordgo.Locale]string{}
	for locale, s := range c.Localizations(key) {
		out[discordgo.Locale(locale)] = s
	}
	return &out
}
