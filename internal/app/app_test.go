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
	"github.com/herald-bot/herald/internal/feature"
	"github.com/herald-bot/herald/internal/store/storetest"
	"github.com/herald-bot/herald/internal/testsupport/pgtest"
	"github.com/herald-bot/herald/internal/testsupport/wait"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// testConfig points herald at dbURL and at a simulator of the test's own.
func testConfig(t *testing.T, dbURL string) config.Config {
	t.Helper()
	s := simtest.New(t)
	s.SetApplicationFlags(simtest.PortalIntents)
	s.CreateGuild(sim.DefaultFixture())
	cfg, err := LoadConfig(func(k string) (string, bool) {
		v, ok := map[string]string{
			"DISCORD_TOKEN": simtest.Token, "DATABASE_URL": dbURL,
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

// /readyz answers 503 with a reason while Postgres is unreachable and 200
// again once it returns; the database is cut through a proxy of the test's
// own, never by stopping the shared server.
func TestReadyzFollowsDatabase(t *testing.T) {
	t.Parallel()
	dbURL, proxy := storetest.BehindProxy(t)

	ctx, cancel := context.WithCancel(t.Context())
	a, err := New(ctx, testConfig(t, dbURL), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()

	wait.Until(t, "readyz 200", func() bool { code, _ := readyz(t, a.AdminAddr()); return code == 200 })
	proxy.Cut()
	wait.Until(t, "readyz 503", func() bool { code, _ := readyz(t, a.AdminAddr()); return code == 503 })
	if _, reason := readyz(t, a.AdminAddr()); reason == "" {
		t.Error("503 without a reason")
	}
	proxy.Restore()
	wait.Until(t, "readyz 200", func() bool { code, _ := readyz(t, a.AdminAddr()); return code == 200 })

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
	wait.Until(t, "readyz 200 after migrating", func() bool { code, _ := readyz(t, a.AdminAddr()); return code == 200 })
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
	wait.Until(t, "readyz 200", func() bool { code, _ := readyz(t, a.AdminAddr()); return code == 200 })
}

// herald run connects to the (simulated) gateway, and the REST call that
// finds the gateway and its session start limit goes through herald's
// transport engine.
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
	wait.Until(t, "gateway ready", func() bool { gw := a.sessions.get(0); return gw != nil && gw.Ready() == nil })
	wait.Until(t, "guild available", func() bool { return a.sessions.get(0).Guilds() == 1 })
	var sawGateway bool
	for _, b := range a.engine.Snapshot().Buckets {
		if b.Route == "GET /gateway/bot" && b.Processed >= 1 {
			sawGateway = true
		}
	}
	if !sawGateway {
		t.Errorf("GET /gateway/bot did not go through the engine: %+v", a.engine.Snapshot().Buckets)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
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

// herald's own features declare exactly the commands they route, and
// register-commands sends that declaration: one bulk overwrite, checked
// against Discord's spec by the simulator.
func TestRegisterCommandsSendsTheFeaturesDeclarations(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, storetest.URL(t))
	if err := RegisterCommands(t.Context(), cfg, slog.New(slog.DiscardHandler), ""); err != nil {
		t.Fatal(err)
	}
	api, _ := strings.CutSuffix(cfg.DiscordAPI, "/api/v10")
	res, err := http.Get(api + "/_sim/requests")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var reqs []sim.RequestRecord
	if err := json.NewDecoder(res.Body).Decode(&reqs); err != nil {
		t.Fatal(err)
	}
	puts := 0
	for _, r := range reqs {
		if r.Method == "PUT" && r.Route == "/applications/{application_id}/commands" && r.Status == 200 {
			puts++
		}
	}
	if puts != 1 {
		t.Errorf("%d successful bulk overwrites, want 1: %+v", puts, reqs)
	}
}

// A feature's service listens from New on, runs while herald runs and is
// stopped with it; the app tells its address.
func TestFeatureServices(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	running, stopped := make(chan struct{}), make(chan struct{})
	svc := feature.Feature{Name: "svc", Build: func(k feature.Kit) error {
		ln, err := k.Services.Listen("svc", "127.0.0.1:0")
		if err != nil {
			return err
		}
		k.Services.Run("svc", func(ctx context.Context) error {
			defer close(stopped)
			close(running)
			<-ctx.Done()
			return ln.Close()
		})
		return nil
	}}
	a, err := New(ctx, testConfig(t, storetest.URL(t)), slog.New(slog.DiscardHandler), svc)
	if err != nil {
		t.Fatal(err)
	}
	if a.ServiceAddr("svc") == "" {
		t.Fatal("no address for the service")
	}
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	<-running
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	select {
	case <-stopped:
	default:
		t.Error("Run returned before the service stopped")
	}
}
