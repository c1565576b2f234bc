package rolemenu

import (
	"github.com/herald-bot/herald/internal/guildroles"
)

// guildRoles is what the checks read: a snapshot of the guild's roles,
// its owner and the bot's roles, and whether the owner allowed
// dangerous roles in this server's menus (one switch for all of them;
// /roles bulk asks the owner per action instead).
type guildRoles struct {
	*guildroles.Snapshot
	allowDangerous bool
}

// checkRole says whether a menu may hand out roleID (see
// guildroles.Snapshot.Check), with the owner's choice on dangerous roles.
func (g *guildRoles) checkRole(roleID, actorID string, actorRoles []string) *guildroles.Refusal {
	return g.Check(roleID, actorID, actorRoles, g.allowDangerous)
}
