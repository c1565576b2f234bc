package app

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/herald-bot/herald/internal/config"
	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/discord/simtest"
	"github.com/herald-bot/herald/internal/store/storetest"
	"github.com/herald-bot/herald/internal/testsupport/pgtest"
	"github.com/herald-bot/herald/internal/testsupport/tcpproxy"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// testConfig points herald at dbURL and at a simulator of the test's own.
func testConfig(t *testing.T, dbURL string) config.Config {
	t.Helper()
	s := simtest.New(t)
	s.CreateGuild(sim.DefaultFixture())
	cfg, err := config.Load(func(k string) (string, bool) {
		v, ok := map[string]string{
			"DISCORD_TOKEN": simtest.Token, "DISCORD_APP_ID": s.BotUserID(), "DATABASE_URL": dbURL,
			"HERALD_DISCORD_API": s.URL + "/api/v10",
			"HERALD_HTTP_ADDR":   "127.0.0.1:0", "HERALD_SHUTDOWN_TIMEOUT": "2s",
		}[k]
		return v, ok
	})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func readyz(t *testing.T, addr string) (int, string) {
	t.Helper()
	res, err := http.Get("http://" + addr + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body struct{ Status, Reason string }
	b, _ := io.ReadAll(res.Body)
	if err := json.Unmarshal(b, &body); err != nil {
		t.Fatalf("readyz body %q: %v", b, err)
	}
	return res.StatusCode, body.Reason
}

// eventually polls f until it reports true or the deadline passes.
func eventually(t *testing.T, what string, f func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !f() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// /readyz answers 503 with a reason while Postgres is unreachable and 200
// again once it returns; the database is cut through a proxy of the test's
// own, never by stopping the shared server.
func TestReadyzFollowsDatabase(t *testing.T) {
	t.Parallel()
	u, err := url.Parse(storetest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	proxy := tcpproxy.Start(t, u.Host)
	u.Host = proxy.Addr()

	ctx, cancel := context.WithCancel(t.Context())
	a, err := New(ctx, testConfig(t, u.String()), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()

	eventually(t, "readyz 200", func() bool { code, _ := readyz(t, a.AdminAddr()); return code == 200 })
	proxy.Cut()
	eventually(t, "readyz 503", func() bool { code, _ := readyz(t, a.AdminAddr()); return code == 503 })
	if _, reason := readyz(t, a.AdminAddr()); reason == "" {
		t.Error("503 without a reason")
	}
	proxy.Restore()
	eventually(t, "readyz 200", func() bool { code, _ := readyz(t, a.AdminAddr()); return code == 200 })

	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run = %v", err)
	}
}

// A herald started before its migrations stays up and unready, says how to
// fix it, and starts once the schema is current.
func TestWaitsForMigrations(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	cfg := testConfig(t, pgtest.URL(t))
	a, err := New(ctx, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	code, reason := readyz(t, a.AdminAddr())
	if code != 503 || !strings.Contains(reason, "herald migrate") {
		t.Fatalf("readyz = %d %q, want 503 naming `herald migrate`", code, reason)
	}
	if err := Migrate(ctx, cfg, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "readyz 200 after migrating", func() bool { code, _ := readyz(t, a.AdminAddr()); return code == 200 })
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run = %v", err)
	}
}

// HERALD_AUTO_MIGRATE creates and migrates the database before starting.
func TestAutoMigrate(t *testing.T) {
	t.Parallel()
	u, err := url.Parse(pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(t, u.String())
	cfg.AutoMigrate = true
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	a, err := New(ctx, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	go a.Run(ctx)
	eventually(t, "readyz 200", func() bool { code, _ := readyz(t, a.AdminAddr()); return code == 200 })
}

// herald run connects to the (simulated) gateway, and the discordgo REST
// call that finds the gateway goes through herald's transport engine.
func TestRunConnectsGatewayThroughTransport(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	a, err := New(ctx, testConfig(t, storetest.URL(t)), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	eventually(t, "gateway ready", func() bool { gw := a.gateway.Load(); return gw != nil && gw.Ready() == nil })
	eventually(t, "guild available", func() bool { return a.gateway.Load().Guilds() == 1 })
	var sawGateway bool
	for _, b := range a.engine.Snapshot().Buckets {
		if b.Route == "GET /gateway" && b.Processed == 1 {
			sawGateway = true
		}
	}
	if !sawGateway {
		t.Errorf("GET /gateway did not go through the engine: %+v", a.engine.Snapshot().Buckets)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// herald answers a member's click on a control it does not know, and the
// answer's latency shows in /metrics.
func TestRunAnswersOutdatedControls(t *testing.T) {
	t.Parallel()
	s := simtest.New(t)
	g := s.CreateGuild(sim.DefaultFixture())
	cfg, err := config.Load(func(k string) (string, bool) {
		v, ok := map[string]string{
			"DISCORD_TOKEN": simtest.Token, "DISCORD_APP_ID": s.BotUserID(), "DATABASE_URL": storetest.URL(t),
			"HERALD_DISCORD_API": s.URL + "/api/v10", "HERALD_HTTP_ADDR": "127.0.0.1:0",
		}[k]
		return v, ok
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	a, err := New(ctx, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	go a.Run(ctx)
	eventually(t, "gateway ready", func() bool { gw := a.gateway.Load(); return gw != nil && gw.Guilds() == 1 })
	var msg struct{ ID string }
	s.Do("POST", "/channels/"+g.Channel("roles")+"/messages", map[string]any{"content": "menu"}).JSON(t, &msg)
	in := s.Interact(sim.InteractionRequest{GuildID: g.ID, ChannelID: g.Channel("roles"), UserID: g.Member("carol"),
		Kind: "component", CustomID: "rolemenu:1:pick/1/2", MessageID: msg.ID})
	eventually(t, "ack", func() bool { return s.Interaction(in.ID).Acked })
	// The answer is counted once herald has read Discord's reply, a moment
	// after the simulator recorded the ack.
	eventually(t, "ack latency in /metrics", func() bool {
		res, err := http.Get("http://" + a.AdminAddr() + "/metrics")
		if err != nil {
			return false
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return strings.Contains(string(body), `herald_ack_latency_seconds_count{outcome="outdated"} 1`)
	})
}

// Stopping a herald that still waits for its migrations exits cleanly.
func TestStopWhileWaitingForMigrations(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	a, err := New(ctx, testConfig(t, pgtest.URL(t)), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	if code, _ := readyz(t, a.AdminAddr()); code != 503 {
		t.Fatalf("readyz = %d, want 503", code)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run = %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not stop while waiting for migrations")
	}
}
