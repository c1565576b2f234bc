package interaction

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"
)

// GuildOnly refuses interactions from DMs, in the member's language.
func GuildOnly(next Handler) Handler {
	return func(ctx context.Context, in *Interaction) (*discordgo.InteractionResponse, error) {
		if in.GuildID == "" || in.Member == nil {
			return Ephemeral(in.Localizer.T("interaction.guild_only", nil)), nil
		}
		return next(ctx, in)
	}
}

// permissionKeys name the permissions herald's routes can require, as
// locale keys under [permission].
var permissionKeys = map[int64]string{
	discordgo.PermissionManageGuild:    "manage_guild",
	discordgo.PermissionManageRoles:    "manage_roles",
	discordgo.PermissionManageChannels: "manage_channels",
	discordgo.PermissionManageMessages: "manage_messages",
	discordgo.PermissionManageThreads:  "manage_threads",
}

// RequirePermission refuses members without perm (or Administrator) in
// the interaction's channel, read from the permissions Discord computed
// into the payload, so it costs no request. A command hidden by
// default_member_permissions is checked again here, since a server can
// change who sees it. perm must be one of the permissions herald can name
// in every language; any other panics when the route is registered.
func RequirePermission(perm int64) Middleware {
	key, ok := permissionKeys[perm]
	if !ok {
		panic(fmt.Sprintf("interaction: RequirePermission(%d): no localized name; add it to permissionKeys and locales", perm))
	}
	return func(next Handler) Handler {
		return func(ctx context.Context, in *Interaction) (*discordgo.InteractionResponse, error) {
			if in.Member == nil || in.Member.Permissions&(perm|discordgo.PermissionAdministrator) == 0 {
				name := in.Localizer.T("permission."+key, nil)
				return Ephemeral(in.Localizer.T("interaction.not_allowed", map[string]any{"Permission": name})), nil
			}
			return next(ctx, in)
		}
	}
}

// Cooldown lets each member use the routes it guards once per d (per
// route and guild), answering earlier attempts with "you can do this again
// in N s". It is a cooldown — herald's own limit on members — never a
// rate limit, which is Discord's on herald. Autocomplete is not limited.
// State is in memory: a member's guild is served by one process.
func Cooldown(d time.Duration) Middleware { return Limit(1, d) }

// Limit is Cooldown allowing n uses per d: room for a few quick clicks,
// none for spam.
func Limit(n int, d time.Duration) Middleware {
	c := &cooldowns{n: n, d: d, uses: map[string][]time.Time{}}
	return func(next Handler) Handler {
		return func(ctx context.Context, in *Interaction) (*discordgo.InteractionResponse, error) {
			if in.Type == discordgo.InteractionApplicationCommandAutocomplete {
				return next(ctx, in)
			}
			if left := c.take(in.Path+"|"+in.GuildID+"|"+in.UserID(), in.Received); left > 0 {
				secs := int(math.Ceil(left.Seconds()))
				return Ephemeral(in.Localizer.T("cooldown.active", map[string]any{"Seconds": secs})), nil
			}
			return next(ctx, in)
		}
	}
}

type cooldowns struct {
	n         int
	d         time.Duration
	mu        sync.Mutex
	uses      map[string][]time.Time // each key's uses within the last d, oldest first
	lastSweep time.Time
}

// take records a use of key at now, or reports how long until one is
// allowed again.
func (c *cooldowns) take(key string, now time.Time) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	if now.Sub(c.lastSweep) > c.d {
		for k, uses := range c.uses {
			if !now.Before(uses[len(uses)-1].Add(c.d)) {
				delete(c.uses, k)
			}
		}
		c.lastSweep = now
	}
	uses := c.uses[key]
	for len(uses) > 0 && !now.Before(uses[0].Add(c.d)) {
		uses = uses[1:]
	}
	if len(uses) >= c.n {
		c.uses[key] = uses
		return uses[0].Add(c.d).Sub(now)
	}
	c.uses[key] = append(uses, now)
	return 0
}
