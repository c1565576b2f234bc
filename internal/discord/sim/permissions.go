package sim

import "time"

// Permission bits (Discord's permission flags).
const (
	permCreateInstantInvite   uint64 = 1 << 0
	permKickMembers           uint64 = 1 << 1
	permAdministrator         uint64 = 1 << 3
	permManageChannels        uint64 = 1 << 4
	permAddReactions          uint64 = 1 << 6
	permViewChannel           uint64 = 1 << 10
	permSendMessages          uint64 = 1 << 11
	permManageMessages        uint64 = 1 << 13
	permEmbedLinks            uint64 = 1 << 14
	permAttachFiles           uint64 = 1 << 15
	permReadMessageHistory    uint64 = 1 << 16
	permManageRoles           uint64 = 1 << 28
	permManageWebhooks        uint64 = 1 << 29
	permManageThreads         uint64 = 1 << 34
	permCreatePublicThreads   uint64 = 1 << 35
	permCreatePrivateThreads  uint64 = 1 << 36
	permSendMessagesInThreads uint64 = 1 << 38
	permModerateMembers       uint64 = 1 << 40
	// permPinMessages was split from Manage Messages in August 2025; since
	// 23 February 2026 Manage Messages alone no longer pins.
	permPinMessages uint64 = 1 << 51

	// permAll is every permission Discord defines, up to Bypass Slowmode
	// (1 << 52).
	permAll uint64 = 1<<53 - 1
)

// dmPermissions is what a bot may do in its DM with a user; anything else
// answers 50003 Cannot execute action on a DM channel.
const dmPermissions = permViewChannel | permSendMessages | permReadMessageHistory | permAddReactions |
	permEmbedLinks | permAttachFiles | permPinMessages

// basePermissions is the guild-level permission set of a member: the owner
// and Administrator get everything, otherwise @everyone OR'd with each role.
func basePermissions(g *guild, m *member) uint64 {
	if m.userID == g.ownerID {
		return permAll
	}
	perms := g.everyone().permissions
	for _, id := range m.roles {
		if r, ok := g.roles[id]; ok {
			perms |= r.permissions
		}
	}
	if perms&permAdministrator != 0 {
		return permAll
	}
	return perms
}

// channelPermissions applies a channel's overwrites to the base set in
// Discord's order: @everyone, then all role overwrites together, then the
// member's own. Threads take their parent's permissions.
func (s *state) channelPermissions(g *guild, m *member, c *channel) uint64 {
	perms := basePermissions(g, m)
	if perms&permAdministrator != 0 {
		return permAll
	}
	if c.isThread() {
		if parent, ok := s.channels[c.parentID]; ok {
			c = parent
		}
	}
	for _, o := range c.overwrites {
		if o.typ == 0 && o.id == g.id {
			perms = perms&^o.deny | o.allow
		}
	}
	var allow, deny uint64
	for _, o := range c.overwrites {
		if o.typ == 0 && o.id != g.id && hasRole(m, o.id) {
			allow |= o.allow
			deny |= o.deny
		}
	}
	perms = perms&^deny | allow
	for _, o := range c.overwrites {
		if o.typ == 1 && o.id == m.userID {
			perms = perms&^o.deny | o.allow
		}
	}
	// Without View Channel, no other channel permission applies.
	if perms&permViewChannel == 0 {
		return 0
	}
	return perms
}

// memberPermissions is what an interaction tells of a member's
// permissions in c at now: the channel's, less all but View Channel and
// Read Message History while the member is timed out (Permissions:
// "Timed out members will temporarily lose all permissions except
// VIEW_CHANNEL and READ_MESSAGE_HISTORY. Owners and admin users with
// ADMINISTRATOR permissions are exempt."). The bot's own checks need no
// timeout: nothing in the simulator can time the bot out.
func (s *state) memberPermissions(g *guild, m *member, c *channel, now time.Time) uint64 {
	perms := s.channelPermissions(g, m, c)
	if m.timeoutExpiry == nil || !now.Before(*m.timeoutExpiry) || perms == permAll {
		return perms
	}
	return perms & (permViewChannel | permReadMessageHistory)
}

func hasRole(m *member, roleID string) bool {
	for _, id := range m.roles {
		if id == roleID {
			return true
		}
	}
	return false
}

// highestRole is the member's top role; @everyone when it has none.
func highestRole(g *guild, m *member) *role {
	top := g.everyone()
	for _, id := range m.roles {
		if r, ok := g.roles[id]; ok && roleAbove(r, top) {
			top = r
		}
	}
	return top
}

func (s *state) botMember(g *guild) *member { return g.members[s.botID] }

// requireGuild checks a guild-wide permission of the bot.
func (s *state) requireGuild(g *guild, perm uint64) *apiError {
	if basePermissions(g, s.botMember(g))&perm != perm {
		return errMissingPermissions
	}
	return nil
}

// requireChannel checks channel permissions of the bot the way Discord
// answers: 50001 Missing Access when it cannot see the channel at all,
// 50013 Missing Permissions when it sees it but lacks the rest.
func (s *state) requireChannel(c *channel, perm uint64) *apiError {
	if c.typ == channelDM {
		if perm&^dmPermissions != 0 {
			return errDMChannel
		}
		return nil
	}
	g := s.guilds[c.guildID]
	perms := s.channelPermissions(g, s.botMember(g), c)
	if perms&permViewChannel == 0 {
		return errMissingAccess
	}
	if c.typ == channelPrivateThread && perms&permManageThreads == 0 {
		if _, in := c.threadMembers[s.botID]; !in {
			return errMissingAccess
		}
	}
	if perms&perm != perm {
		return errMissingPermissions
	}
	return nil
}

// requireRoleBelowBot enforces the role hierarchy: the bot may only manage
// roles strictly below its own highest role, even with Manage Roles.
func (s *state) requireRoleBelowBot(g *guild, r *role) *apiError {
	if err := s.requireGuild(g, permManageRoles); err != nil {
		return err
	}
	bot := s.botMember(g)
	if bot.userID == g.ownerID {
		return nil
	}
	if !roleAbove(highestRole(g, bot), r) {
		return errMissingPermissions
	}
	return nil
}
