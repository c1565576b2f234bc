package guildroles_test

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/jonboulle/clockwork"

	"github.com/herald-bot/herald/internal/discord/rest"
	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/discord/simtest"
	"github.com/herald-bot/herald/internal/discord/transport"
	"github.com/herald-bot/herald/internal/guildroles"
)

func reader(t *testing.T, window time.Duration, opts ...guildroles.Option) (*simtest.Sim, sim.FixtureResult, *guildroles.Reader) {
	t.Helper()
	s := simtest.New(t)
	g := s.CreateGuild(sim.DefaultFixture())
	e := transport.New(transport.Config{ApplicationID: s.ApplicationID(), Base: http.DefaultTransport})
	return s, g, guildroles.New(rest.New(e, s.URL+"/api/v10", simtest.Token, s.ApplicationID()), nil, s.BotUserID(), window, opts...)
}

func reads(s *simtest.Sim) int {
	n := 0
	for _, r := range s.Requests() {
		if r.Method == http.MethodGet && (r.Route == "/guilds/{guild_id}" || r.Route == "/guilds/{guild_id}/members/{user_id}") {
			n++
		}
	}
	return n
}

// Fifty concurrent callers within the window share one read — one guild
// and one member request — and see the guild's roles, owner and the
// bot's position.
func TestConcurrentReadsShareOneFetch(t *testing.T) {
	t.Parallel()
	s, g, r := reader(t, time.Minute)
	var wg sync.WaitGroup
	snaps := make([]*guildroles.Snapshot, 50)
	for i := range snaps {
		wg.Go(func() {
			snap, err := r.Get(t.Context(), g.ID)
			if err != nil {
				t.Error(err)
			}
			snaps[i] = snap
		})
	}
	wg.Wait()
	if n := reads(s); n != 2 {
		t.Errorf("%d requests, want 2 (guild and bot member)", n)
	}
	snap := snaps[0]
	if snap == nil || snap.OwnerID == "" || snap.Roles[g.Role("News")] == nil {
		t.Fatalf("snapshot = %+v", snap)
	}
	if got, want := snap.BotTop(), snap.Roles[g.BotRoleID].Position; got != want || want == 0 {
		t.Errorf("bot top = %d, want its role's position %d", got, want)
	}
}

// After the window, or after Forget, the next caller reads again.
func TestWindowAndForget(t *testing.T) {
	t.Parallel()
	const window = 50 * time.Millisecond
	clock := clockwork.NewFakeClock()
	s, g, r := reader(t, window, guildroles.WithClock(clock))
	get := func() {
		if _, err := r.Get(t.Context(), g.ID); err != nil {
			t.Fatal(err)
		}
	}
	get()
	get()
	if n := reads(s); n != 2 {
		t.Fatalf("%d requests within the window, want 2", n)
	}
	// The read was stamped before the last get returned, so the window
	// runs from the clock's present.
	clock.Advance(window - 1)
	get()
	if n := reads(s); n != 2 {
		t.Fatalf("%d requests just within the window, want 2", n)
	}
	clock.Advance(1)
	get()
	if n := reads(s); n != 4 {
		t.Errorf("%d requests after the window, want 4", n)
	}
	r.Forget(g.ID)
	get()
	if n := reads(s); n != 6 {
		t.Errorf("%d requests after Forget, want 6", n)
	}
}

// Every permission that lets a member hurt the server or its members, or
// read what is kept from them, makes a role dangerous: it is refused
// unless the owner allowed such roles. Everyday permissions are not.
func TestDangerousPermissions(t *testing.T) {
	t.Parallel()
	dangerous := map[string]int64{
		"Kick Members": discordgo.PermissionKickMembers, "Ban Members": discordgo.PermissionBanMembers,
		"Administrator": discordgo.PermissionAdministrator, "Manage Channels": discordgo.PermissionManageChannels,
		"Manage Server": discordgo.PermissionManageGuild, "View Audit Log": discordgo.PermissionViewAuditLogs,
		"Manage Messages": discordgo.PermissionManageMessages, "Mention @everyone, @here, and All Roles": discordgo.PermissionMentionEveryone,
		"View Server Insights": discordgo.PermissionViewGuildInsights, "Mute Members": discordgo.PermissionVoiceMuteMembers,
		"Deafen Members": discordgo.PermissionVoiceDeafenMembers, "Move Members": discordgo.PermissionVoiceMoveMembers,
		"Manage Nicknames": discordgo.PermissionManageNicknames, "Manage Roles": discordgo.PermissionManageRoles,
		"Manage Webhooks": discordgo.PermissionManageWebhooks, "Manage Expressions": discordgo.PermissionManageGuildExpressions,
		"Manage Events": discordgo.PermissionManageEvents, "Manage Threads": discordgo.PermissionManageThreads,
		"Timeout Members": discordgo.PermissionModerateMembers, "View Creator Monetization Analytics": discordgo.PermissionViewCreatorMonetizationAnalytics,
		"Pin Messages": 1 << 51,
	}
	harmless := int64(discordgo.PermissionCreateInstantInvite) | discordgo.PermissionAddReactions | discordgo.PermissionViewChannel |
		discordgo.PermissionSendMessages | discordgo.PermissionReadMessageHistory | discordgo.PermissionVoiceConnect |
		discordgo.PermissionVoiceSpeak | discordgo.PermissionChangeNickname | discordgo.PermissionCreatePrivateThreads |
		discordgo.PermissionCreateGuildExpressions | discordgo.PermissionCreateEvents | discordgo.PermissionSendPolls |
		discordgo.PermissionUseExternalApps | 1<<48 | 1<<52 | 1<<53 // 53: not in Discord's table yet
	snap := func(perms int64) *guildroles.Snapshot {
		return &guildroles.Snapshot{GuildID: "g", OwnerID: "owner", BotRoles: []string{"bot"}, Roles: map[string]*discordgo.Role{
			"bot": {ID: "bot", Position: 5, Managed: true}, "r": {ID: "r", Name: "Role", Position: 1, Permissions: perms}}}
	}
	for name, bit := range dangerous {
		why := snap(bit).Check("r", "", nil, false)
		if why == nil || why.Key != "dangerous" || why.Perm != name {
			t.Errorf("a role with %s: %+v, want refused as dangerous naming it", name, why)
		}
		if why := snap(bit).Check("r", "", nil, true); why != nil {
			t.Errorf("a role with %s once the owner allowed it: %+v", name, why)
		}
	}
	if why := snap(harmless).Check("r", "", nil, false); why != nil {
		t.Errorf("a role with everyday permissions: %+v", why)
	}
	if why := snap(discordgo.PermissionAll).Check("r", "", nil, false); why == nil || why.Perm != "Administrator" {
		t.Errorf("a role with every permission: %+v, want Administrator named", why)
	}
}

// A member's record is shared the same way: concurrent reads within the
// window make one request, Forget of their guild drops it too, and a
// member who left comes back as Discord's 404.
func TestMemberReads(t *testing.T) {
	t.Parallel()
	s, g, r := reader(t, time.Minute)
	alice := g.Member("alice")
	memberReads := func() int {
		n := 0
		for _, req := range s.Requests() {
			if req.Method == http.MethodGet && req.Path == "/guilds/"+g.ID+"/members/"+alice {
				n++
			}
		}
		return n
	}
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			m, err := r.Member(t.Context(), g.ID, alice)
			if err != nil || len(m.Roles) != 1 || m.Roles[0] != g.Role("Moderator") {
				t.Errorf("alice = %+v, %v", m, err)
			}
		})
	}
	wg.Wait()
	if n := memberReads(); n != 1 {
		t.Errorf("%d reads of alice within the window, want 1", n)
	}
	r.Forget(g.ID)
	if _, err := r.Member(t.Context(), g.ID, alice); err != nil {
		t.Fatal(err)
	}
	if n := memberReads(); n != 2 {
		t.Errorf("%d reads of alice after Forget, want 2", n)
	}
	if _, err := r.Member(t.Context(), g.ID, "1"); err == nil {
		t.Error("a member who is not in the guild: no error")
	}
}
