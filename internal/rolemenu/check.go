package rolemenu

import (
	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/guildroles"
)

// dangerous are the permissions a role handed out by a menu must not carry
// unless the server owner allowed it: each lets a member take over or
// wreck the server.
var dangerous = []struct {
	bit  int64
	name string
}{
	{discordgo.PermissionAdministrator, "Administrator"},
	{discordgo.PermissionManageGuild, "Manage Server"},
	{discordgo.PermissionManageRoles, "Manage Roles"},
	{discordgo.PermissionManageChannels, "Manage Channels"},
	{discordgo.PermissionBanMembers, "Ban Members"},
	{discordgo.PermissionKickMembers, "Kick Members"},
	{discordgo.PermissionModerateMembers, "Moderate Members"},
	{discordgo.PermissionManageWebhooks, "Manage Webhooks"},
	{discordgo.PermissionMentionEveryone, "Mention Everyone"},
}

// Refusal says why a role cannot be in a menu or be changed: a locale
// key under rolemenu.refused and what it names.
type Refusal struct {
	Key  string // everyone, managed, above_bot, above_you, dangerous, deleted
	Role string // the role's name, or its mention when deleted (there is no name left to show)
	Perm string // the dangerous permission, for Key dangerous
}

// guildRoles is what the checks read: a snapshot of the guild's roles,
// its owner and the bot's roles, and whether the owner allowed
// dangerous roles.
type guildRoles struct {
	*guildroles.Snapshot
	allowDangerous bool
}

// checkRole says whether herald may hand out roleID: run when an admin
// configures it (actor = the admin and their roles) and again before
// every change with fresh data (actor empty: the member clicking does not
// need to outrank it). nil means allowed.
func (g *guildRoles) checkRole(roleID, actorID string, actorRoles []string) *Refusal {
	r := g.Roles[roleID]
	switch {
	case r == nil:
		return &Refusal{Key: "deleted", Role: roleMention(roleID)}
	case roleID == g.GuildID:
		return &Refusal{Key: "everyone", Role: r.Name}
	case r.Managed:
		return &Refusal{Key: "managed", Role: r.Name}
	case r.Position >= g.BotTop():
		return &Refusal{Key: "above_bot", Role: r.Name}
	case actorID != "" && actorID != g.OwnerID && r.Position >= g.Top(actorRoles):
		return &Refusal{Key: "above_you", Role: r.Name}
	}
	if !g.allowDangerous {
		for _, d := range dangerous {
			if r.Permissions&d.bit != 0 {
				return &Refusal{Key: "dangerous", Role: r.Name, Perm: d.name}
			}
		}
	}
	return nil
}
