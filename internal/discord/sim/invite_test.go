package sim_test

import (
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/discord/simtest"
	"github.com/herald-bot/herald/internal/testsupport/wait"
)

// A server the bot has not been added to answers its REST calls 403
// Missing Access and is absent from READY; following the invite URL (the
// OAuth2 bot authorization flow) adds the bot with a managed role holding
// exactly the permissions the URL asks for, lowest above @everyone, and
// GUILD_CREATE tells its session.
func TestInviteAddsTheBot(t *testing.T) {
	t.Parallel()
	s := simtest.New(t)
	g := s.CreateGuild(sim.Fixture{Name: "new server", Uninvited: true,
		Roles:    []sim.FixtureRole{{Name: "Red", Permissions: "0"}},
		Channels: []sim.FixtureChannel{{Name: "roles", Type: 0}}})
	if g.BotRoleID != "" {
		t.Fatalf("an uninvited guild has a bot role %s", g.BotRoleID)
	}
	wantError(t, s.Do("GET", "/guilds/"+g.ID, nil), 403, 50001)
	wantError(t, s.Do("POST", "/channels/"+g.Channel("roles")+"/messages", map[string]any{"content": "hi"}), 403, 50001)

	dg := s.Session()
	dg.Identify.Intents = discordgo.IntentsGuilds
	joined := make(chan string, 4)
	dg.AddHandler(func(_ *discordgo.Session, gc *discordgo.GuildCreate) { joined <- gc.ID })
	ready := make(chan int, 1)
	dg.AddHandler(func(_ *discordgo.Session, r *discordgo.Ready) { ready <- len(r.Guilds) })
	if err := dg.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dg.Close() })
	if n := <-ready; n != 0 {
		t.Fatalf("READY lists %d guilds, want none before the invite", n)
	}

	for _, bad := range []string{"https://example.com/oauth2/authorize?client_id=" + s.ApplicationID() + "&scope=bot",
		"https://discord.com/oauth2/authorize?client_id=1&scope=bot&permissions=8",
		"https://discord.com/oauth2/authorize?client_id=" + s.ApplicationID() + "&scope=applications.commands"} {
		rawControl(t, "POST", s.URL+"/_sim/oauth2/authorize", `{"url": "`+bad+`", "guild_id": "`+g.ID+`"}`, 400)
	}
	roleID := s.Authorize("https://discord.com/oauth2/authorize?client_id="+s.ApplicationID()+
		"&permissions=268438528&scope=bot+applications.commands", g.ID)
	select {
	case id := <-joined:
		if id != g.ID {
			t.Fatalf("GUILD_CREATE for %s", id)
		}
	case <-time.After(gatewayTestReadTimeout):
		t.Fatal("no GUILD_CREATE after the invite")
	}
	snap := s.Guild(g.ID)
	var bot, red sim.SnapshotRole
	for _, r := range snap.Roles {
		switch r.ID {
		case roleID:
			bot = r
		case g.Role("Red"):
			red = r
		}
	}
	if !bot.Managed || bot.Permissions != "268438528" || bot.Position != 1 || red.Position != 2 {
		t.Fatalf("bot role %+v, Red %+v", bot, red)
	}
	wantStatus(t, s.Do("GET", "/guilds/"+g.ID, nil), 200)

	// The owner drags herald's role above Red.
	s.MoveRole(g.ID, roleID, 2)
	wait.Until(t, "the new positions", func() bool {
		for _, r := range s.Guild(g.ID).Roles {
			if r.ID == roleID && r.Position != 2 || r.ID == g.Role("Red") && r.Position != 1 {
				return false
			}
		}
		return true
	})
}
