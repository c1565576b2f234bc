package gateway

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/discord/intents"
	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/discord/simtest"
	"github.com/herald-bot/herald/internal/discord/transport"
	"github.com/herald-bot/herald/internal/testsupport/logbuf"
	"github.com/herald-bot/herald/internal/testsupport/wait"
)

// options point a session at s through a transport engine of its own.
func options(t *testing.T, s *simtest.Sim) (Options, *transport.Engine) {
	t.Helper()
	e := transport.New(transport.Config{ApplicationID: s.ApplicationID()})
	rt, err := transport.Rewrite(e.RoundTripper(), s.URL+"/api/v10")
	if err != nil {
		t.Fatal(err)
	}
	// A new application: no privileged intent.
	return Options{Token: simtest.Token, Transport: rt, Intents: intents.For(0), OnInteraction: func(*discordgo.Interaction) {},
		Logger: slog.New(slog.DiscardHandler)}, e
}

func open(t *testing.T, s *simtest.Sim, logs *logbuf.Buffer) (*Session, *transport.Engine) {
	t.Helper()
	o, e := options(t, s)
	o.Logger = slog.New(slog.NewTextHandler(logs, nil))
	gw, err := Open(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gw.Close() })
	return gw, e
}

// The session connects through the transport engine, becomes ready, sees
// its guilds, and is ready again after Discord asks it to reconnect.
func TestSessionLifecycle(t *testing.T) {
	t.Parallel()
	s := simtest.New(t)
	s.CreateGuild(sim.DefaultFixture())
	var logs logbuf.Buffer
	gw, e := open(t, s, &logs)
	wait.Until(t, "ready", func() bool { return gw.Ready() == nil && gw.Guilds() == 1 })
	if want := intents.For(0); gw.Discord().Identify.Intents != want {
		t.Errorf("intents = %d, want %d", gw.Discord().Identify.Intents, want)
	}
	var found bool
	for _, b := range e.Snapshot().Buckets {
		found = found || b.Route == "GET /gateway"
	}
	if !found {
		t.Error("GET /gateway did not go through the engine")
	}

	s.SetFault(sim.Fault{Gateway: "disconnect", CloseCode: 4000})
	wait.Until(t, "resumed", func() bool { return strings.Contains(logs.String(), "gateway resumed") && gw.Ready() == nil })
	if !strings.Contains(logs.String(), "gateway disconnected; reconnecting") {
		t.Errorf("the drop was not logged:\n%s", logs.String())
	}

	s.CreateGuild(sim.Fixture{Name: "second"})
	wait.Until(t, "second guild", func() bool { return gw.Guilds() == 2 })

	if err := gw.Close(); err != nil {
		t.Fatal(err)
	}
	if gw.Ready() == nil {
		t.Error("ready after Close")
	}
	if strings.Contains(logs.String(), simtest.Token) {
		t.Error("the token reached the logs")
	}
}

// A bad token is refused at Open with the gateway's 4004 close.
func TestOpenWithBadToken(t *testing.T) {
	t.Parallel()
	s := simtest.New(t, simtest.WithOptions(sim.Options{Token: "the-right-token"}))
	o, _ := options(t, s)
	o.Token = "wrong"
	if _, err := Open(t.Context(), o); err == nil {
		t.Fatal("Open with a rejected token succeeded")
	}
}

// Two sessions, shard 0 and 1 of 2, split the guilds between them.
func TestShardsSplitGuilds(t *testing.T) {
	t.Parallel()
	s := simtest.New(t)
	const guilds = 6
	for i := range guilds {
		s.CreateGuild(sim.Fixture{Name: "g" + string(rune('a'+i))})
		time.Sleep(3 * time.Millisecond) // spread the snowflakes' timestamps
	}
	var sessions []*Session
	for shard := range 2 {
		o, _ := options(t, s)
		o.ShardID, o.ShardCount = shard, 2
		gw, err := Open(t.Context(), o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { gw.Close() })
		sessions = append(sessions, gw)
	}
	wait.Until(t, "both ready", func() bool { return sessions[0].Ready() == nil && sessions[1].Ready() == nil })
	wait.Until(t, "all guilds", func() bool { return sessions[0].Guilds()+sessions[1].Guilds() >= guilds })
	time.Sleep(200 * time.Millisecond) // unsharded sessions would each go on to see every guild
	if a, b := sessions[0].Guilds(), sessions[1].Guilds(); a+b != guilds {
		t.Errorf("shards saw %d and %d guilds, want %d between them", a, b, guilds)
	}
	if sessions[0].Discord().Identify.Shard == nil || sessions[1].Discord().Identify.Shard == nil {
		t.Error("sessions did not identify with a shard")
	}
}

// discordgo's REST methods are refused before they reach Discord: herald
// calls Discord only through internal/discord/rest.
func TestDiscordgoRESTIsRefused(t *testing.T) {
	t.Parallel()
	s := simtest.New(t)
	g := s.CreateGuild(sim.DefaultFixture())
	var logs logbuf.Buffer
	gw, _ := open(t, s, &logs)
	wait.Until(t, "ready", func() bool { return gw.Ready() == nil })
	before := len(s.Server.Requests())
	_, err := gw.Discord().ChannelMessageSend(g.Channel("general"), "bypass")
	if err == nil || !strings.Contains(err.Error(), "internal/discord/rest") {
		t.Fatalf("ChannelMessageSend = %v, want a refusal naming the REST client", err)
	}
	for _, r := range s.Server.Requests()[before:] {
		if r.Method == "POST" {
			t.Errorf("a refused call reached the simulator: %s %s", r.Method, r.Route)
		}
	}
}
