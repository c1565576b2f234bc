package sim_test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/discord/sim/wsgateway"
	"github.com/herald-bot/herald/internal/discord/simtest"
	"github.com/herald-bot/herald/internal/testsupport/wait"
)

// TestDiscordgoEndToEnd runs a stock discordgo Session against the
// simulator: READY, a forced reconnect resumed without losing a dispatch,
// and an injected interaction answered through REST.
func TestDiscordgoEndToEnd(t *testing.T) {
	t.Parallel()
	s := simtest.New(t)
	s.SetApplicationFlags(simtest.PortalIntents) // the Server Members intent, as its owner enables it
	g := s.CreateGuild(sim.DefaultFixture())
	general := g.Channel("general")

	dg := s.Session()
	dg.Identify.Intents = discordgo.IntentsGuilds | discordgo.IntentsGuildMessages | discordgo.IntentsGuildMembers
	// Handlers in arrival order, so the order of dispatches is observable.
	dg.SyncEvents = true
	var (
		mu       sync.Mutex
		ready    bool
		resumed  int
		contents []string
	)
	dg.AddHandler(func(_ *discordgo.Session, r *discordgo.Ready) {
		mu.Lock()
		defer mu.Unlock()
		ready = r.User.ID == g.BotUserID
	})
	var guildChannels, guildRoles int
	dg.AddHandler(func(_ *discordgo.Session, gc *discordgo.GuildCreate) {
		mu.Lock()
		defer mu.Unlock()
		if gc.ID == g.ID {
			guildChannels, guildRoles = len(gc.Channels), len(gc.Roles)
		}
	})
	dg.AddHandler(func(_ *discordgo.Session, _ *discordgo.Resumed) {
		mu.Lock()
		defer mu.Unlock()
		resumed++
	})
	dg.AddHandler(func(_ *discordgo.Session, m *discordgo.MessageCreate) {
		mu.Lock()
		defer mu.Unlock()
		contents = append(contents, m.Content)
	})
	dg.AddHandler(func(s *discordgo.Session, i *discordgo.InteractionCreate) {
		if i.Type != discordgo.InteractionApplicationCommand || i.ApplicationCommandData().Name != "ping" {
			return
		}
		s.InteractionRespond(i.Interaction, &discordgo.InteractionResponse{
			Type: discordgo.InteractionResponseChannelMessageWithSource,
			Data: &discordgo.InteractionResponseData{Content: "pong " + i.Member.User.Username},
		})
	})
	if err := dg.Open(); err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { dg.Close() })

	wait.Until(t, "READY", func() bool { mu.Lock(); defer mu.Unlock(); return ready })
	wait.Until(t, "GUILD_CREATE", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return guildChannels == 4 && guildRoles == 7
	})

	// Force a reconnect and send dispatches while the session is away.
	s.SetFault(sim.Fault{Gateway: "reconnect"})
	for i := range 3 {
		wantStatus(t, s.Do("POST", "/channels/"+general+"/messages", map[string]any{"content": fmt.Sprint("during-", i)}), 200)
	}
	wait.Until(t, "RESUMED", func() bool { mu.Lock(); defer mu.Unlock(); return resumed == 1 })
	// discordgo resumes on the URL it cached from GET /gateway, not on
	// READY's resume_gateway_url: the simulator counts it.
	if st := s.Gateway(); st.Resumes != 1 || st.ResumesElsewhere != 1 {
		t.Errorf("gateway stats after discordgo's resume: %+v", st)
	}
	wantStatus(t, s.Do("POST", "/channels/"+general+"/messages", map[string]any{"content": "after"}), 200)
	wait.Until(t, "every MESSAGE_CREATE once", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(contents) == 4
	})
	mu.Lock()
	if fmt.Sprint(contents) != "[during-0 during-1 during-2 after]" {
		t.Errorf("dispatches %v", contents)
	}
	mu.Unlock()

	in := s.Interact(sim.InteractionRequest{GuildID: g.ID, ChannelID: general, UserID: g.Member("carol"), Kind: "command", Name: "ping"})
	wait.Until(t, "the interaction ack", func() bool { return s.Interaction(in.ID).Acked })
	st := s.Interaction(in.ID)
	if st.AckType != 4 || st.Original["content"] != "pong carol" {
		t.Fatalf("ack %+v, want a message answer shown as the original", st)
	}
	msgs := s.Messages(general)
	if last := msgs[len(msgs)-1]; last.Content != "pong carol" {
		t.Fatalf("response message %q", last.Content)
	}
}

// TestGatewayEventsAndFaults checks the dispatches herald listens to and
// the gateway faults, through a stock discordgo Session.
func TestGatewayEventsAndFaults(t *testing.T) {
	t.Parallel()
	s := simtest.New(t, simtest.WithFakeClock())
	s.SetApplicationFlags(simtest.PortalIntents)
	g := s.CreateGuild(sim.DefaultFixture())
	dg := s.Session()
	dg.Identify.Intents = discordgo.IntentsGuilds | discordgo.IntentsGuildMessages | discordgo.IntentsGuildMembers
	var (
		mu     sync.Mutex
		events []string
	)
	count := func(typ string) int {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, e := range events {
			if e == typ {
				n++
			}
		}
		return n
	}
	dg.AddHandler(func(_ *discordgo.Session, e *discordgo.Event) {
		mu.Lock()
		defer mu.Unlock()
		events = append(events, e.Type)
	})
	if err := dg.Open(); err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { dg.Close() })
	wait.Until(t, "READY", func() bool { return count("READY") == 1 })

	general := g.Channel("general")
	m := s.Do("POST", "/channels/"+general+"/messages", map[string]any{"content": "bye"})
	var msg struct{ ID string }
	m.JSON(t, &msg)
	wantStatus(t, s.Do("DELETE", "/channels/"+general+"/messages/"+msg.ID, nil), 204)
	wantStatus(t, s.Do("PATCH", "/guilds/"+g.ID+"/roles/"+g.Role("Art"), map[string]any{"name": "Artists"}), 200)
	wantStatus(t, s.Do("DELETE", "/guilds/"+g.ID+"/roles/"+g.Role("Art"), nil), 204)
	th := s.Do("POST", "/channels/"+g.Channel("support-info")+"/threads", map[string]any{"name": "ticket", "type": 12})
	var thread struct{ ID string }
	th.JSON(t, &thread)
	wantStatus(t, s.Do("DELETE", "/channels/"+thread.ID, nil), 200)
	wantStatus(t, s.Do("DELETE", "/channels/"+g.Channel("roles"), nil), 200)
	req, _ := http.NewRequest("DELETE", s.URL+"/_sim/guilds/"+g.ID+"/members/"+g.Member("dave"), nil)
	resp, err := raw.Do(req)
	if err != nil || resp.StatusCode != 204 {
		t.Fatalf("remove member: %v %v", resp, err)
	}
	resp.Body.Close()
	if _, err := s.AddMember(g.ID, sim.FixtureMember{Username: "erin", Roles: []string{"News"}}); err != nil {
		t.Fatal(err)
	}
	for _, typ := range []string{"GUILD_MEMBER_ADD", "MESSAGE_DELETE", "GUILD_ROLE_UPDATE", "GUILD_ROLE_DELETE", "THREAD_DELETE", "CHANNEL_DELETE", "GUILD_MEMBER_REMOVE"} {
		wait.Until(t, typ, func() bool { return count(typ) == 1 })
	}
	if _, err := dg.State.Channel(g.Channel("roles")); err == nil {
		t.Error("discordgo state still has the deleted channel")
	}

	// A resumable close: discordgo resumes and misses nothing.
	s.SetFault(sim.Fault{Gateway: "disconnect", CloseCode: 4000})
	wantStatus(t, s.Do("POST", "/channels/"+general+"/messages", map[string]any{"content": "while away"}), 200)
	wait.Until(t, "RESUMED after close 4000", func() bool { return count("RESUMED") == 1 })
	wait.Until(t, "the buffered MESSAGE_CREATE", func() bool { return count("MESSAGE_CREATE") == 2 })

	// A non-resumable invalid session: discordgo identifies again, at
	// once, so only after Discord's identify window has passed.
	s.Clock.Advance(wsgateway.DefaultIdentifyWindow)
	s.SetFault(sim.Fault{Gateway: "invalidate_session"})
	wait.Until(t, "a second READY", func() bool { return count("READY") == 2 })
	wait.Until(t, "one session", func() bool { return s.GatewaySessions() == 1 })
}
