package gateway

import (
	"bytes"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/discord/simtest"
	"github.com/herald-bot/herald/internal/discord/transport"
	"github.com/herald-bot/herald/internal/i18n"
	"github.com/herald-bot/herald/locales"
)

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

func eventually(t *testing.T, what string, f func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !f() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func catalog(t *testing.T) *i18n.Catalog {
	t.Helper()
	c, err := i18n.New(locales.FS)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func open(t *testing.T, s *simtest.Sim, router *Router, logs *syncBuffer) (*Session, *transport.Engine) {
	t.Helper()
	e := transport.New(transport.Config{ApplicationID: s.BotUserID()})
	rt, err := transport.Rewrite(e.RoundTripper(), s.URL+"/api/v10")
	if err != nil {
		t.Fatal(err)
	}
	gw, err := Open(t.Context(), Options{Token: simtest.Token, Client: &http.Client{Transport: rt}, Router: router,
		Catalog: catalog(t), Logger: slog.New(slog.NewTextHandler(logs, nil))})
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
	var logs syncBuffer
	gw, e := open(t, s, nil, &logs)
	eventually(t, "ready", func() bool { return gw.Ready() == nil && gw.Guilds() == 1 })
	if gw.Discord().Identify.Intents != Intents {
		t.Errorf("intents = %d, want %d", gw.Discord().Identify.Intents, Intents)
	}
	var found bool
	for _, b := range e.Snapshot().Buckets {
		found = found || b.Route == "GET /gateway"
	}
	if !found {
		t.Error("GET /gateway did not go through the engine")
	}

	s.SetFault(sim.Fault{Gateway: "disconnect", CloseCode: 4000})
	eventually(t, "resumed", func() bool { return strings.Contains(logs.String(), "gateway resumed") && gw.Ready() == nil })
	if !strings.Contains(logs.String(), "gateway disconnected; reconnecting") {
		t.Errorf("the drop was not logged:\n%s", logs.String())
	}

	s.CreateGuild(sim.Fixture{Name: "second"})
	eventually(t, "second guild", func() bool { return gw.Guilds() == 2 })

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
	e := transport.New(transport.Config{})
	rt, _ := transport.Rewrite(e.RoundTripper(), s.URL+"/api/v10")
	_, err := Open(t.Context(), Options{Token: "wrong", Client: &http.Client{Transport: rt}, Catalog: catalog(t), Logger: slog.New(slog.DiscardHandler)})
	if err == nil {
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
		e := transport.New(transport.Config{ApplicationID: s.BotUserID()})
		rt, _ := transport.Rewrite(e.RoundTripper(), s.URL+"/api/v10")
		gw, err := Open(t.Context(), Options{Token: simtest.Token, Client: &http.Client{Transport: rt}, ShardID: shard, ShardCount: 2,
			Catalog: catalog(t), Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { gw.Close() })
		sessions = append(sessions, gw)
	}
	eventually(t, "both ready", func() bool { return sessions[0].Ready() == nil && sessions[1].Ready() == nil })
	eventually(t, "all guilds", func() bool { return sessions[0].Guilds()+sessions[1].Guilds() >= guilds })
	time.Sleep(200 * time.Millisecond) // unsharded sessions would each go on to see every guild
	if a, b := sessions[0].Guilds(), sessions[1].Guilds(); a+b != guilds {
		t.Errorf("shards saw %d and %d guilds, want %d between them", a, b, guilds)
	}
	if sessions[0].Discord().Identify.Shard == nil || sessions[1].Discord().Identify.Shard == nil {
		t.Error("sessions did not identify with a shard")
	}
}
