package sim_test

import (
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/discord/simtest"
)

// A GUILD_CREATE lists every member only to a session with the Guild
// Presences intent; without it, only the bot and members in voice
// channels, of whom the simulator has none ("Guild Create", gateway
// events). Both after READY and when the bot joins a guild later.
func TestGuildCreateMembersNeedPresences(t *testing.T) {
	t.Parallel()
	// A tenth of Discord's time: the second session's IDENTIFY waits out
	// the first's 5 s (max_concurrency 1) in half a second.
	s := simtest.New(t, simtest.WithOptions(sim.Options{TimeScale: 0.1}))
	s.SetApplicationFlags(simtest.PortalIntents | sim.AppFlagGatewayPresenceLimited)
	first := s.CreateGuild(sim.DefaultFixture())
	open := func(intents discordgo.Intent) <-chan *discordgo.GuildCreate {
		dg := s.Session()
		dg.Identify.Intents = intents
		got := make(chan *discordgo.GuildCreate, 4)
		dg.AddHandler(func(_ *discordgo.Session, gc *discordgo.GuildCreate) { got <- gc })
		if err := dg.Open(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { dg.Close() })
		return got
	}
	members := func(ch <-chan *discordgo.GuildCreate, guild string) []string {
		t.Helper()
		select {
		case gc := <-ch:
			if gc.ID != guild {
				t.Fatalf("GUILD_CREATE for %s, want %s", gc.ID, guild)
			}
			var ids []string
			for _, m := range gc.Members {
				ids = append(ids, m.User.ID)
			}
			return ids
		case <-time.After(gatewayTestReadTimeout):
			t.Fatalf("no GUILD_CREATE for %s", guild)
		}
		return nil
	}
	without := open(discordgo.IntentsGuilds)
	with := open(discordgo.IntentsGuilds | discordgo.IntentsGuildPresences)
	check := func(g sim.FixtureResult) {
		t.Helper()
		if got := members(without, g.ID); len(got) != 1 || got[0] != g.BotUserID {
			t.Errorf("without Guild Presences: members %v, want only the bot %s", got, g.BotUserID)
		}
		// The fixture's members, its owner and the bot.
		if got, want := len(members(with, g.ID)), len(g.Members)+1; got != want {
			t.Errorf("with Guild Presences: %d members, want all %d", got, want)
		}
	}
	check(first)
	check(s.CreateGuild(sim.Fixture{Name: "joined later", Channels: []sim.FixtureChannel{{Name: "general", Type: 0}}}))
}
