package guildroles

import (
	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/i18n"
)

// permission is one of Discord's permission bits, decided: a dangerous
// one lets a member hurt the server or its members, or read what is kept
// from them, so a role carrying it is handed out (by a menu or /roles
// bulk) only when the server owner allowed it.
type permission struct {
	bit       int64
	name      string // as the Discord client shows it
	dangerous bool
	why       string
}

// Bits discordgo v0.29.0 does not name yet.
const (
	permSetVoiceChannelStatus int64 = 1 << 48
	permPinMessages           int64 = 1 << 51
	permBypassSlowmode        int64 = 1 << 52
)

// permissions is every bit of Discord's table, in its order
// (https://discord.com/developers/docs/topics/permissions#permissions-bitwise-permission-flags;
// Pin Messages and Bypass Slowmode: change log "Permission Changes Going
// into Effect February 2026"). The rule: a permission that acts on other
// members, on what others posted or own, on the server's settings, or
// that shows what members are not meant to see, is dangerous; one that
// only shapes the member's own participation is not. A bit Discord adds
// later counts as harmless until it is decided here: Discord sets new
// bits on existing roles when it splits a permission, and refusing them
// would stop every menu at once.
var permissions = []permission{
	{discordgo.PermissionCreateInstantInvite, "Create Invite", false, "invites people in; members have it by default"},
	{discordgo.PermissionKickMembers, "Kick Members", true, "removes members from the server"},
	{discordgo.PermissionBanMembers, "Ban Members", true, "removes members for good, with their recent messages"},
	{discordgo.PermissionAdministrator, "Administrator", true, "every permission, past every channel's overwrites"},
	{discordgo.PermissionManageChannels, "Manage Channels", true, "edits and deletes channels"},
	{discordgo.PermissionManageGuild, "Manage Server", true, "changes the server's settings, integrations and invites"},
	{discordgo.PermissionAddReactions, "Add Reactions", false, "the member's own reactions"},
	{discordgo.PermissionViewAuditLogs, "View Audit Log", true, "reads every moderation action and its reason"},
	{discordgo.PermissionVoicePrioritySpeaker, "Priority Speaker", false, "the member's own voice, louder; nobody is silenced"},
	{discordgo.PermissionVoiceStreamVideo, "Video", false, "the member's own stream"},
	{discordgo.PermissionViewChannel, "View Channels", false, "what a verify menu is for; channel overwrites still hide private channels"},
	{discordgo.PermissionSendMessages, "Send Messages", false, "the member's own messages"},
	{discordgo.PermissionSendTTSMessages, "Send Text-to-Speech Messages", false, "the member's own messages, read aloud"},
	{discordgo.PermissionManageMessages, "Manage Messages", true, "deletes anyone's messages"},
	{discordgo.PermissionEmbedLinks, "Embed Links", false, "the member's own messages"},
	{discordgo.PermissionAttachFiles, "Attach Files", false, "the member's own messages"},
	{discordgo.PermissionReadMessageHistory, "Read Message History", false, "history of channels the member can see anyway"},
	{discordgo.PermissionMentionEveryone, "Mention @everyone, @here, and All Roles", true, "notifies every member at once"},
	{discordgo.PermissionUseExternalEmojis, "Use External Emoji", false, "the member's own messages"},
	{discordgo.PermissionViewGuildInsights, "View Server Insights", true, "the server's analytics, kept to its staff"},
	{discordgo.PermissionVoiceConnect, "Connect", false, "the member joins voice channels they can see"},
	{discordgo.PermissionVoiceSpeak, "Speak", false, "the member's own voice"},
	{discordgo.PermissionVoiceMuteMembers, "Mute Members", true, "silences anyone in voice"},
	{discordgo.PermissionVoiceDeafenMembers, "Deafen Members", true, "deafens anyone in voice"},
	{discordgo.PermissionVoiceMoveMembers, "Move Members", true, "drags anyone between voice channels or disconnects them"},
	{discordgo.PermissionVoiceUseVAD, "Use Voice Activity", false, "the member's own microphone"},
	{discordgo.PermissionChangeNickname, "Change Nickname", false, "the member's own nickname"},
	{discordgo.PermissionManageNicknames, "Manage Nicknames", true, "renames anyone: impersonation and abuse"},
	{discordgo.PermissionManageRoles, "Manage Roles", true, "hands out roles and edits channel permissions"},
	{discordgo.PermissionManageWebhooks, "Manage Webhooks", true, "posts as anyone and reads webhook tokens"},
	{discordgo.PermissionManageGuildExpressions, "Manage Expressions", true, "deletes anyone's emoji, stickers and sounds"},
	{discordgo.PermissionUseApplicationCommands, "Use Application Commands", false, "every command still checks its own permission"},
	{discordgo.PermissionVoiceRequestToSpeak, "Request to Speak", false, "asks; a stage moderator decides"},
	{discordgo.PermissionManageEvents, "Manage Events", true, "edits and deletes anyone's events"},
	{discordgo.PermissionManageThreads, "Manage Threads", true, "reads every private thread (tickets), archives and deletes threads"},
	{discordgo.PermissionCreatePublicThreads, "Create Public Threads", false, "the member's own threads"},
	{discordgo.PermissionCreatePrivateThreads, "Create Private Threads", false, "the member's own threads, which only those invited see"},
	{discordgo.PermissionUseExternalStickers, "Use External Stickers", false, "the member's own messages"},
	{discordgo.PermissionSendMessagesInThreads, "Send Messages in Threads", false, "the member's own messages"},
	{discordgo.PermissionUseEmbeddedActivities, "Use Activities", false, "the member's own activities"},
	{discordgo.PermissionModerateMembers, "Timeout Members", true, "times anyone out"},
	{discordgo.PermissionViewCreatorMonetizationAnalytics, "View Creator Monetization Analytics", true, "the server's revenue and subscribers"},
	{discordgo.PermissionUseSoundboard, "Use Soundboard", false, "the member's own sounds"},
	{discordgo.PermissionCreateGuildExpressions, "Create Expressions", false, "adds the member's own; edits and deletes only those"},
	{discordgo.PermissionCreateEvents, "Create Events", false, "the member's own events; edits and deletes only those"},
	{discordgo.PermissionUseExternalSounds, "Use External Sounds", false, "the member's own sounds"},
	{discordgo.PermissionSendVoiceMessages, "Send Voice Messages", false, "the member's own messages"},
	{permSetVoiceChannelStatus, "Set Voice Channel Status", false, "a status line on the voice channel the member is in"},
	{discordgo.PermissionSendPolls, "Create Polls", false, "the member's own messages"},
	{discordgo.PermissionUseExternalApps, "Use External Apps", false, "the member's own apps' answers, shown as theirs"},
	{permPinMessages, "Pin Messages", true, "pins and unpins anyone's messages: a channel's rules can vanish from its pins"},
	{permBypassSlowmode, "Bypass Slowmode", false, "the member's own pace; moderators can still time them out"},
}

// dangerous names the first dangerous permission in perms, Administrator
// first since it holds all others, or "".
func dangerous(perms int64) string {
	if perms&discordgo.PermissionAdministrator != 0 {
		return "Administrator"
	}
	for _, p := range permissions {
		if p.dangerous && perms&p.bit != 0 {
			return p.name
		}
	}
	return ""
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
	if perm := dangerous(r.Permissions); perm != "" && !allowDangerous {
		return &Refusal{Key: "dangerous", Role: r.Name, Perm: perm}
	}
	return nil
}
