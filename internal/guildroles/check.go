package guildroles

import (
	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/i18n"
)

// dangerous are the permissions a role handed out to members must not
// carry unless the server owner allowed it: each lets a member take over
// or wreck the server.
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

// Refusal says why a role cannot be handed out: a locale key under
// role.refused and what it names.
type Refusal struct {
	Key  string `json:"Key"`  // everyone, managed, above_bot, above_you, dangerous, deleted, no_permission
	Role string `json:"Role"` // the role's name, or its mention when deleted (there is no name left to show)
	Perm string `json:"Perm"` // the dangerous permission, for Key dangerous
}

// Text is the refusal in the reader's language.
func (r *Refusal) Text(loc *i18n.Localizer) string {
	role := r.Role
	if r.Key != "deleted" {
		role = "**" + role + "**"
	}
	return loc.T("role.refused."+r.Key, map[string]any{"Role": role, "Perm": r.Perm})
}

// Check says whether herald may hand out roleID: run when an admin
// configures or starts it (actor = the admin and their roles) and again
// before every change with fresh data (actor empty: a member clicking a
// menu does not need to outrank it). allowDangerous lets roles with
// dangerous permissions through. nil means allowed.
func (s *Snapshot) Check(roleID, actorID string, actorRoles []string, allowDangerous bool) *Refusal {
	r := s.Roles[roleID]
	switch {
	case r == nil:
		return &Refusal{Key: "deleted", Role: "<@&" + roleID + ">"}
	case roleID == s.GuildID:
		return &Refusal{Key: "everyone", Role: r.Name}
	case r.Managed:
		return &Refusal{Key: "managed", Role: r.Name}
	case r.Position >= s.BotTop():
		return &Refusal{Key: "above_bot", Role: r.Name}
	case actorID != "" && actorID != s.OwnerID && r.Position >= s.Top(actorRoles):
		return &Refusal{Key: "above_you", Role: r.Name}
	}
	if !allowDangerous {
		for _, d := range dangerous {
			if r.Permissions&d.bit != 0 {
				return &Refusal{Key: "dangerous", Role: r.Name, Perm: d.name}
			}
		}
	}
	return nil
}
