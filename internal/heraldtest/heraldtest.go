// Package heraldtest runs herald in a test the way production wires it,
// in the spirit of rivertest: a Discord simulator of the test's own
// (validated against Discord's OpenAPI spec when HERALD_DISCORD_SPEC is
// set), an isolated, migrated Postgres database, and the whole app built
// by app.New — herald's features plus any the test adds — connected
// through the gateway. Tests then act as members do in Discord: run a
// command, click a button, pick from a select menu, submit a modal; and
// wait for what herald does in the simulator with Eventually.
//
// A test binary using it calls pgtest.Main from TestMain.
package heraldtest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/herald-bot/herald/internal/app"
	"github.com/herald-bot/herald/internal/clock"
	"github.com/herald-bot/herald/internal/config"
	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/discord/simtest"
	"github.com/herald-bot/herald/internal/feature"
	"github.com/herald-bot/herald/internal/i18n"
	"github.com/herald-bot/herald/internal/interaction"
	"github.com/herald-bot/herald/internal/store/storetest"
	"github.com/herald-bot/herald/internal/testsupport/logbuf"
	"github.com/herald-bot/herald/internal/testsupport/tcpproxy"
	"github.com/herald-bot/herald/internal/testsupport/wait"
)

// Herald is one herald under test.
type Herald struct {
	// Sim is the test's Discord simulator.
	Sim *simtest.Sim
	// Guild is the guild the fixture created: its channels, roles and
	// members by name.
	Guild sim.FixtureResult
	// DB is a pool on herald's database, for assertions.
	DB *pgxpool.Pool
	// App is herald itself; Config is what it runs with.
	App    *app.App
	Config config.Config
	// Clock is herald's clock, kept across restarts: Advance makes a
	// scheduled job (a temporary role's removal, say) due at once. The
	// simulator keeps real time.
	Clock *clock.Clock
	// DBProxy stands between herald and its database with
	// WithDatabaseProxy, to cut, hold or lose its traffic (DB does not
	// use it).
	DBProxy *tcpproxy.Proxy

	t        testing.TB
	commands map[string]*discordgo.ApplicationCommand
	logs     *logbuf.Buffer
	features []feature.Feature
	overHTTP bool
	stop     func()             // stops the running herald; nil while stopped
	exited   chan error         // what the running herald's Run returned
	cancel   context.CancelFunc // cancels its Run
}

type options struct {
	appFlags int64
	features []feature.Feature
	fixture  sim.Fixture
	env      map[string]string
	dbProxy  bool
	dbURL    string
	overHTTP bool
}

// Option configures New.
type Option func(*options)

// WithFeatures adds features to herald's own, as app.New's extra ones.
func WithFeatures(fs ...feature.Feature) Option {
	return func(o *options) { o.features = append(o.features, fs...) }
}

// WithApplicationFlags gives the simulated application these flags
// instead of simtest.PortalIntents (Server Members and Message Content
// switched on, as the README tells an owner to): 0 is an application as
// Discord creates it, with no privileged intent.
func WithApplicationFlags(flags int64) Option { return func(o *options) { o.appFlags = flags } }

// WithFixture loads f instead of the simulator's default guild.
func WithFixture(f sim.Fixture) Option { return func(o *options) { o.fixture = f } }

// WithEnv sets environment variables herald reads, over the harness's.
func WithEnv(env map[string]string) Option {
	return func(o *options) {
		for k, v := range env {
			o.env[k] = v
		}
	}
}

// WithDatabase runs herald on the database at url (a cluster of the
// test's own, to crash and restart) instead of a fresh copy of the
// migrated template; herald migrates it at start.
func WithDatabase(url string) Option {
	return func(o *options) {
		o.dbURL = url
		o.env["HERALD_AUTO_MIGRATE"] = "true"
	}
}

// WithDatabaseProxy connects herald to its database through a TCP proxy
// of the test's own (Herald.DBProxy), for faults between the two.
func WithDatabaseProxy() Option { return func(o *options) { o.dbProxy = true } }

// New starts a simulator with one guild and herald connected to it, and
// returns once herald is ready (/readyz answers 200). Everything stops
// when the test ends.
func New(t testing.TB, opts ...Option) *Herald {
	t.Helper()
	o := options{appFlags: simtest.PortalIntents, fixture: sim.DefaultFixture(), env: map[string]string{}}
	for _, opt := range opts {
		opt(&o)
	}
	s := simtest.New(t)
	s.SetApplicationFlags(o.appFlags)
	s.ShortIdentifyWindow() // a test's restart need not wait Discord's 5 s
	g := s.CreateGuild(o.fixture)
	dbURL := o.dbURL
	if dbURL == "" {
		dbURL = storetest.URL(t)
	}
	heraldURL := dbURL
	var proxy *tcpproxy.Proxy
	if o.dbProxy {
		u, err := url.Parse(dbURL)
		if err != nil {
			t.Fatal(err)
		}
		proxy = tcpproxy.Start(t, u.Host)
		u.Host = proxy.Addr()
		heraldURL = u.String()
	}
	env := map[string]string{
		"DISCORD_TOKEN": simtest.Token, "DATABASE_URL": heraldURL,
		"HERALD_DISCORD_API": s.URL + "/api/v10", "HERALD_HTTP_ADDR": "127.0.0.1:0", "HERALD_SHUTDOWN_TIMEOUT": "2s",
		"HERALD_IDENTIFY_WINDOW":     simtest.IdentifyWindow.String(),
		"HERALD_WORKERS_INTERACTIVE": "4", "HERALD_WORKERS_EVENTS": "4", "HERALD_WORKERS_SYNC": "2", "HERALD_WORKERS_BACKGROUND": "1",
		// Tests share one Postgres (100 connections) with every package
		// running beside them, and each connection a herald opens costs
		// the server about 40 ms of CPU on this 2-core machine (pgbench
		// -C): a test run starts hundreds of heralds.
		"HERALD_DB_FASTPATH_CONNS": "2", "HERALD_DB_JOBS_CONNS": "4",
	}
	for k, v := range o.env {
		env[k] = v
	}
	cfg, err := app.LoadConfig(func(k string) (string, bool) { v, ok := env[k]; return v, ok }, o.features...)
	if err != nil {
		t.Fatalf("heraldtest: %v", err)
	}
	catalog, err := i18n.Shipped()
	if err != nil {
		t.Fatal(err)
	}
	declared, err := feature.Commands(catalog, append(app.Features(), o.features...)...)
	if err != nil {
		t.Fatalf("heraldtest: %v", err)
	}
	cfg.Clock = &clock.Clock{}
	h := &Herald{Sim: s, Guild: g, Config: cfg, Clock: cfg.Clock, DBProxy: proxy, t: t, commands: map[string]*discordgo.ApplicationCommand{},
		logs: &logbuf.Buffer{}, features: o.features, overHTTP: o.overHTTP}
	for _, c := range declared {
		h.commands[c.Name] = c
	}
	t.Cleanup(func() {
		if h.stop != nil {
			h.stop()
		}
		if t.Failed() {
			log := h.logs.String()
			t.Logf("herald's log (its end):\n%s", log[max(0, len(log)-16<<10):])
			var calls strings.Builder
			reqs := s.Server.Requests()
			for _, r := range reqs[max(0, len(reqs)-100):] {
				fmt.Fprintf(&calls, "%s %s %s → %d %s\n", r.Time.Format("15:04:05.000"), r.Method, r.Route, r.Status, r.Scope)
			}
			t.Logf("the simulator's last requests:\n%s", calls.String())
		}
	})
	if h.DB, err = pgxpool.New(context.Background(), dbURL); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.DB.Close)
	h.Start()
	return h
}

// Start runs herald, built afresh by app.New on the same simulator and
// database, and returns once it is ready: after Stop, this is a
// redeploy.
func (h *Herald) Start() {
	h.t.Helper()
	if h.stop != nil {
		h.t.Fatal("heraldtest: Start while herald runs")
	}
	log := slog.New(slog.NewTextHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ctx, cancel := context.WithCancel(context.Background())
	var err error
	if h.App, err = app.New(ctx, h.Config, log, h.features...); err != nil {
		cancel()
		h.t.Fatalf("heraldtest: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- h.App.Run(ctx) }()
	h.exited, h.cancel = done, cancel
	h.stop = func() {
		cancel()
		if err := <-done; err != nil {
			h.t.Errorf("heraldtest: herald stopped with %v", err)
		}
	}
	h.Eventually("herald ready", func() bool {
		res, err := http.Get("http://" + h.App.AdminAddr() + "/readyz")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK
	})
	if h.overHTTP {
		// Saved as an owner saves it in the Developer Portal, once herald
		// answers Discord's checks; a restarted herald has a new port.
		h.Sim.SetInteractionsEndpoint(h.InteractionsURL())
	}
}

// Stop stops herald the way SIGTERM does: its gateway session closes (the
// events Discord raises until Start are never delivered to it) and
// running jobs get HERALD_SHUTDOWN_TIMEOUT to finish. Its database and
// the simulator stay as they are.
func (h *Herald) Stop() {
	h.t.Helper()
	if h.stop == nil {
		h.t.Fatal("heraldtest: Stop while herald is stopped")
	}
	h.stop()
	h.stop = nil
}

// Exited waits until herald stops by itself — Discord ended its session
// for good, say — and returns what Run returned; it fails the test if
// herald is still running after wait.Timeout. Herald is then stopped.
func (h *Herald) Exited() error {
	h.t.Helper()
	if h.stop == nil {
		h.t.Fatal("heraldtest: Exited while herald is stopped")
	}
	select {
	case err := <-h.exited:
		h.cancel()
		h.stop = nil
		return err
	case <-time.After(wait.Timeout):
		h.t.Fatal("heraldtest: herald did not stop by itself")
		return nil
	}
}

// Eventually waits until cond holds, failing the test after
// wait.Timeout.
func (h *Herald) Eventually(what string, cond func() bool) {
	h.t.Helper()
	wait.Until(h.t, what, cond)
}

// Metrics is herald's /metrics page (Prometheus text format).
func (h *Herald) Metrics() string {
	h.t.Helper()
	res, err := h.Sim.Client.Get("http://" + h.App.AdminAddr() + "/metrics")
	if err != nil {
		h.t.Fatalf("heraldtest: /metrics: %v", err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		h.t.Fatalf("heraldtest: /metrics: %v", err)
	}
	return string(b)
}

// Logs is everything herald logged so far (text format).
func (h *Herald) Logs() string { return h.logs.String() }

// Member is the id of the fixture member with that username.
func (h *Herald) Member(username string) string {
	return h.id("member", username, h.Guild.Member(username))
}

// Channel is the id of the fixture channel with that name.
func (h *Herald) Channel(name string) string { return h.id("channel", name, h.Guild.Channel(name)) }

// Role is the id of the fixture role with that name.
func (h *Herald) Role(name string) string { return h.id("role", name, h.Guild.Role(name)) }

func (h *Herald) id(kind, name, id string) string {
	h.t.Helper()
	if id == "" {
		h.t.Fatalf("heraldtest: the fixture has no %s %q", kind, name)
	}
	return id
}

// Messages is a channel's messages, oldest first.
func (h *Herald) Messages(channelID string) []*discordgo.Message {
	h.t.Helper()
	return h.Sim.Messages(channelID)
}

// Post posts a message as the bot itself (a menu to click, say) and
// returns it.
func (h *Herald) Post(channelID string, m map[string]any) *discordgo.Message {
	h.t.Helper()
	var out discordgo.Message
	r := h.Sim.Do(http.MethodPost, "/channels/"+channelID+"/messages", m)
	if r.Status != http.StatusOK {
		h.t.Fatalf("heraldtest: post: %d %s", r.Status, r.Body)
	}
	r.JSON(h.t, &out)
	return &out
}

// Requests counts the requests herald sent on method and route (as the
// simulator names routes, "/channels/{channel_id}/messages"), whatever
// Discord answered.
func (h *Herald) Requests(method, route string) int { return h.requests(method, route, false) }

// Succeeded counts the requests on method and route Discord carried out
// (a 2xx answer).
func (h *Herald) Succeeded(method, route string) int { return h.requests(method, route, true) }

func (h *Herald) requests(method, route string, ok bool) int {
	n := 0
	for _, r := range h.Sim.Server.Requests() {
		if r.Method == method && r.Route == route && (!ok || r.Status < 300) {
			n++
		}
	}
	return n
}

// Button is the custom ID of m's button labelled label; the test fails
// when m has none.
func Button(t testing.TB, m *discordgo.Message, label string) string {
	t.Helper()
	for _, b := range interaction.Buttons(m) {
		if b.Label == label {
			return b.CustomID
		}
	}
	t.Fatalf("heraldtest: no button %q on %q", label, m.Content)
	return ""
}
