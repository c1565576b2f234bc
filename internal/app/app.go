// Package app wires herald together: config → store → transport → REST
// client → features → River → fast path → gateway → admin HTTP.
// cmd/herald only parses flags and calls it; `herald run`, the demo, the
// benchmarks and the test harness all build herald with New.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"riverqueue.com/riverui"

	"github.com/herald-bot/herald/internal/adminhttp"
	"github.com/herald-bot/herald/internal/bulk"
	"github.com/herald-bot/herald/internal/cluster"
	"github.com/herald-bot/herald/internal/config"
	"github.com/herald-bot/herald/internal/discord/rest"
	"github.com/herald-bot/herald/internal/discord/transport"
	"github.com/herald-bot/herald/internal/feature"
	"github.com/herald-bot/herald/internal/followup"
	"github.com/herald-bot/herald/internal/gateway"
	"github.com/herald-bot/herald/internal/guildroles"
	"github.com/herald-bot/herald/internal/i18n"
	"github.com/herald-bot/herald/internal/interaction"
	"github.com/herald-bot/herald/internal/logging"
	"github.com/herald-bot/herald/internal/outbox"
	"github.com/herald-bot/herald/internal/rolemenu"
	"github.com/herald-bot/herald/internal/roles"
	"github.com/herald-bot/herald/internal/status"
	"github.com/herald-bot/herald/internal/store"
	"github.com/herald-bot/herald/internal/tickets"
	"github.com/herald-bot/herald/internal/webhookproxy"
	"github.com/herald-bot/herald/internal/work"
)

// Version is herald's version, set at build time with
// -ldflags "-X github.com/herald-bot/herald/internal/app.Version=v1.2.3";
// Discord sees it in every request's User-Agent.
var Version = "dev"

// Features is herald's feature list: one line per feature.
func Features() []feature.Feature {
	return []feature.Feature{
		status.Feature(),
		rolemenu.Feature(),
		tickets.Feature(),
		roles.Feature(),
		webhookproxy.Feature(),
	}
}

// rolesWindow is how long one read of a guild's roles serves every
// feature while herald cannot hear of changes from other processes (see
// guildroles): a burst of clicks reads once, and a role check is never
// more than this out of date.
const rolesWindow = 2 * time.Second

// LoadConfig reads the configuration for `herald run`: herald's settings
// and those of its features, extra ones included (tests, benchmarks).
func LoadConfig(lookup config.Lookup, extra ...feature.Feature) (config.Config, error) {
	return config.Load(lookup, Settings(extra...)...)
}

// The fast path keeps two connections open so the first interaction
// after an idle spell does not wait to connect; the cluster's leases and
// bucket claims, which every Discord call may wait on, have a pool of
// their own so they never queue behind job workers.
const (
	fastPathWarmConns = 2
	clusterConns      = 4
)

// Pools shapes herald's connection pools for cfg: the fast path's own,
// the cluster's own, and one for everything else (River, the job
// workers, the services, the admin server).
func Pools(cfg config.Config) (jobs, fastPath, clusterPool store.Pool) {
	return store.Pool{Name: "herald-jobs", Max: int32(cfg.JobsConns)},
		store.Pool{Name: FastPathPool, Max: int32(cfg.FastPathConns), Min: fastPathWarmConns},
		store.Pool{Name: "herald-cluster", Max: clusterConns}
}

// GroupWriters is how many statements the fast path's group writer keeps
// in flight: each writes every interaction waiting when it starts.
const GroupWriters = 2

// FastPathPool is the application_name of the fast path's connections.
const FastPathPool = "herald-fastpath"

// readyTTL is how long the database part of a readiness check answers
// /readyz: probes and dashboards cost one round per second however many.
const readyTTL = time.Second

// registerTimeout bounds the command registration at start: herald then
// goes on with the commands Discord has.
const registerTimeout = 30 * time.Second

// stopGrace is how long shutdown waits beyond the configured timeout for
// cancelled jobs to return and HTTP requests to drain.
const stopGrace = 5 * time.Second

// App is one running herald process.
type App struct {
	cfg config.Config
	log *slog.Logger
	// application is what Discord reported at start; missing are the
	// features' needs its privileged intents do not meet.
	application rest.Application
	missing     []feature.Need
	// commands are the features' commands, registered at Run.
	commands []*discordgo.ApplicationCommand
	pool     *pgxpool.Pool // River, job workers, the admin server
	// fastPool serves the fast path only, so an interaction never waits
	// for a connection behind busy job workers.
	fastPool *pgxpool.Pool
	// clusterPool serves the cluster's leases and bucket claims.
	clusterPool *pgxpool.Pool
	migrator    *store.Migrator
	river       *work.Client
	// partitions route each guild's jobs to the process serving its
	// shard; nil when this process works no jobs.
	partitions *work.Partitions
	yield      *work.Yield
	dispatch   *outbox.Dispatcher
	writer     *outbox.GroupWriter
	registry   *work.Registry
	engine     *transport.Engine
	discord    *rest.Client
	catalog    *i18n.Catalog
	fastPath   *interaction.FastPath
	metrics    *prometheus.Registry
	cluster    atomic.Pointer[cluster.Cluster] // set once Run joins
	buckets    atomic.Pointer[cluster.Buckets]
	// processID names this process in the cluster and in River.
	processID string
	sessions  sessions           // the gateway sessions of the shards this process holds
	events    *gateway.Events    // the features' event handlers
	roles     *guildroles.Reader // guild snapshots for role checks, kept fresh by events
	services  *feature.Services  // the features' servers and loops
	admin     *http.Server
	riverUI   *riverui.Handler // nil when the operator tools are off
	adminLn   net.Listener
	// interactions serves the Interactions Endpoint URL; nil when
	// HERALD_INTERACTIONS_ADDR is unset.
	interactions   *http.Server
	interactionsLn net.Listener
}

// New connects to the database (migrating first when configured to),
// builds every feature — herald's and extra ones (tests, benchmarks) —
// with the River client and the fast path, and binds the admin HTTP port.
// Nothing runs until Run.
func New(ctx context.Context, cfg config.Config, log *slog.Logger, extra ...feature.Feature) (_ *App, err error) {
	a := &App{cfg: cfg, log: log, registry: work.NewRegistry(), services: &feature.Services{}}
	defer func() {
		if err != nil {
			a.close()
		}
	}()
	// Discord first: a rejected token or a wrong application is fatal,
	// whatever the database's state.
	if a.application, err = readApplication(ctx, cfg, log); err != nil {
		return nil, err
	}
	if cfg.AutoMigrate {
		if err := Migrate(ctx, cfg, log); err != nil {
			return nil, err
		}
	}
	jobsPool, fastPool, clusterPool := Pools(cfg)
	if a.pool, err = store.Open(ctx, cfg.DatabaseURL.Reveal(), jobsPool); err != nil {
		return nil, err
	}
	if a.fastPool, err = store.Open(ctx, cfg.DatabaseURL.Reveal(), fastPool); err != nil {
		return nil, err
	}
	if a.clusterPool, err = store.Open(ctx, cfg.DatabaseURL.Reveal(), clusterPool); err != nil {
		return nil, err
	}
	if a.migrator, err = store.NewMigrator(a.pool, log); err != nil {
		return nil, err
	}
	if a.catalog, err = i18n.Shipped(); err != nil {
		return nil, err
	}
	all := append(Features(), extra...)
	a.missing = Missing(a.application, all...)
	warnMissing(log, a.catalog, a.missing)
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	a.metrics = reg
	a.engine, a.discord = newDiscord(cfg, log, reg, a.application.ID)
	a.registerClusterMetrics(reg)
	policies := map[work.Lane]followup.Policy{}
	for lane, p := range cfg.DropPolicies {
		policies[work.Lane(lane)] = followup.Policy(p)
	}
	followups := followup.NewSender(a.pool, a.discord, followup.Budget{
		Max: cfg.MaxMessagesPerInteraction, Window: cfg.CoalesceWindow, Policies: policies, TokenLife: cfg.TokenLife(),
	}, reg)
	mux := interaction.NewMux()
	inserter := &work.Inserter{}
	a.events = &gateway.Events{}
	a.roles = guildroles.New(a.discord, a.pool, a.application.BotUserID, rolesWindow)
	for _, h := range a.roles.Handlers() {
		a.events.On(h)
	}
	kit := feature.Kit{Config: cfg, Application: a.application, Missing: a.missing, DB: a.pool, Discord: a.discord, Followups: followups, Catalog: a.catalog,
		Log: log, Metrics: reg, Routes: mux, Jobs: a.registry, Insert: inserter, Events: a.events, Services: a.services, Reports: &feature.Reports{}, Health: a.engine.Health,
		Roles: a.roles,
		Bulk:  bulk.New(bulk.Deps{DB: a.pool, Discord: a.discord, Catalog: a.catalog, Routes: mux, Jobs: a.registry.Section("bulk")})}
	if err := feature.Build(kit, all...); err != nil {
		return nil, err
	}
	if a.commands, err = feature.Commands(a.catalog, all...); err != nil {
		return nil, err
	}
	outbox.Housekeeping(a.registry, a.pool)
	a.processID = cluster.NewID("")
	if len(a.registry.Kinds()) > 0 {
		a.partitions = work.NewPartitions(a.pool, cfg.Lanes, log)
	}
	a.yield = work.NewYield(work.YieldOptions{Above: cfg.YieldAbove, Max: cfg.YieldMax, Registerer: reg})
	if a.river, err = work.NewClient(a.pool, work.Options{
		Lanes: cfg.Lanes, Timeouts: cfg.JobTimeouts, Registry: a.registry, ShutdownTimeout: cfg.ShutdownTimeout, Logger: log, Registerer: reg,
		Clock: cfg.Clock, ID: a.processID, Partitions: a.partitions, Yield: a.yield,
	}); err != nil {
		return nil, err
	}
	inserter.Bind(a.river)
	a.dispatch = outbox.NewDispatcher(a.pool, a.river, log, a.yield.Busy)
	a.writer = outbox.NewGroupWriter(a.fastPool)
	if a.fastPath, err = interaction.NewFastPath(interaction.Config{Mux: mux, Catalog: a.catalog, DB: a.fastPool, Writer: a.writer, Dispatch: a.dispatch, Jobs: a.river,
		Yield: a.yield, Discord: a.discord, Registerer: reg, Logger: log}); err != nil {
		return nil, err
	}
	if err := a.listenInteractions(); err != nil {
		return nil, err
	}
	if a.adminLn, err = net.Listen("tcp", cfg.HTTPAddr); err != nil {
		return nil, fmt.Errorf("app: admin HTTP: %w", err)
	}
	op := adminhttp.Operator{Transport: func() any { return a.engine.Snapshot() }, Cluster: a.clusterView, User: cfg.AdminUser,
		Password: cfg.AdminPassword.Reveal(), Loopback: loopback(a.adminLn.Addr()), Hosts: cfg.AdminHosts}
	if op.Open() {
		if a.riverUI, err = riverui.NewHandler(&riverui.HandlerOpts{Endpoints: riverui.NewEndpoints(a.river, nil),
			Logger: logging.AtLeast(log, slog.LevelWarn), Prefix: "/riverui"}); err != nil {
			return nil, fmt.Errorf("app: River UI: %w", err)
		}
		op.RiverUI = a.riverUI
	} else {
		log.Warn("River UI and /debug/transport are off: the admin server is not on a loopback address and HERALD_ADMIN_USER/HERALD_ADMIN_PASSWORD are not set",
			"http_addr", cfg.HTTPAddr)
	}
	a.admin = adminhttp.Server(adminhttp.Handler(a.ready(adminhttp.CacheReady(a.storedReady, readyTTL)), reg, log, op))
	return a, nil
}

// loopback reports whether addr is a loopback address, reachable from
// this machine only.
func loopback(addr net.Addr) bool {
	tcp, ok := addr.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}

// newDiscord builds the transport engine and the one REST client over it,
// for application appID.
func newDiscord(cfg config.Config, log *slog.Logger, reg prometheus.Registerer, appID string) (*transport.Engine, *rest.Client) {
	e := transport.New(transport.Config{ApplicationID: appID, GlobalLimit: cfg.GlobalLimit, GlobalPeriod: cfg.GlobalWindow(), BreakerReset: cfg.CircuitReset, UserAgent: transport.UserAgent(Version),
		Registerer: reg, Logger: log})
	return e, rest.New(e, cfg.DiscordAPI, cfg.DiscordToken.Reveal(), appID)
}

// Deliver hands an interaction to the fast path exactly as the gateway
// does. Discord delivers an interaction again after a RESUME; tests
// replay one this way.
func (a *App) Deliver(i *discordgo.Interaction) { a.fastPath.Handle(i) }

// Yield is what holds jobs back while interactions rush.
func (a *App) Yield() *work.Yield { return a.yield }

// AdminAddr is the address the admin HTTP server listens on.
func (a *App) AdminAddr() string { return a.adminLn.Addr().String() }

// ServiceAddr is the address a feature's service listens on ("" when it
// does not), e.g. "webhookproxy".
func (a *App) ServiceAddr(name string) string { return a.services.Addr(name) }

// Run serves until ctx is cancelled, then shuts down gracefully: it stops
// fetching jobs, lets running ones finish within the shutdown timeout and
// closes the database last.
func (a *App) Run(ctx context.Context) error {
	defer a.close()
	if a.riverUI != nil {
		uiCtx, stopUI := context.WithCancel(context.WithoutCancel(ctx))
		defer stopUI()
		if err := a.riverUI.Start(uiCtx); err != nil {
			return fmt.Errorf("app: River UI: %w", err)
		}
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- a.admin.Serve(a.adminLn) }()

	if err := a.waitForSchema(ctx); err != nil {
		// Stopped while waiting: nothing else was started.
		return a.stopAdmin()
	}
	statsCtx, stopStats := context.WithCancel(ctx)
	statsKept := make(chan struct{})
	// River's job table swings from empty to many thousands of rows in a
	// burst, and River's statements cannot be shaped to it. herald's own
	// tables are left to autovacuum: analyzing the proxy's as they grew
	// cost more (300 ms each time, a slower plan for one lookup) than it
	// saved.
	go func() {
		store.KeepStatistics(statsCtx, a.pool, a.log, store.StatisticsEvery, "river_job")
		close(statsKept)
	}()
	defer func() { stopStats(); <-statsKept }()
	// Membership first: the other processes on the token must see this
	// one before it sends its first request, and its buckets are shared
	// with theirs from that request on.
	cl, err := cluster.Join(ctx, cluster.Options{DB: a.clusterPool, Version: Version, Logger: a.log, OnLive: a.engine.Share, ID: a.processID})
	if err != nil {
		return errors.Join(err, a.stopAdmin())
	}
	a.cluster.Store(cl)
	buckets := cl.Buckets(cluster.BucketOptions{OnHashes: a.engine.SeedHashes, Share: a.engine})
	a.buckets.Store(buckets)
	a.engine.Coordinate(buckets)
	bctx, stopBuckets := context.WithCancel(context.WithoutCancel(ctx))
	bucketsDone := make(chan struct{})
	go func() { buckets.Run(bctx); close(bucketsDone) }()
	// Last of all, once no call is left to send: the leases go back.
	defer func() { stopBuckets(); <-bucketsDone }()
	lctx, stopListening := context.WithCancel(ctx)
	listened := make(chan struct{})
	go func() { a.roles.Listen(lctx, a.log); close(listened) }()
	defer func() { stopListening(); <-listened }()
	kinds := a.registry.Kinds()
	if len(kinds) > 0 {
		if err := a.river.Start(ctx); err != nil {
			return fmt.Errorf("app: start River: %w", err)
		}
	}
	// The dispatcher outlives the gateway, so what was answered last still
	// reaches River before it stops.
	dctx, cancelDispatch := context.WithCancel(context.WithoutCancel(ctx))
	dispatched := make(chan struct{})
	go func() { a.dispatch.Run(dctx); close(dispatched) }()
	wctx, cancelWriters := context.WithCancel(context.WithoutCancel(ctx))
	written := make(chan struct{})
	go func() { a.writer.Run(wctx, GroupWriters); close(written) }()
	// Features' services stop before the work they feed: what a service
	// accepted is committed before River stops.
	sctx, cancelServices := context.WithCancel(context.WithoutCancel(ctx))
	servicesDone := a.services.Start(sctx)
	stopWork := func() error {
		cancelServices()
		serr := servicesDone()
		cancelWriters()
		<-written
		cancelDispatch()
		<-dispatched
		return errors.Join(serr, a.stopRiver(kinds))
	}
	rctx, cancelRegister := context.WithTimeout(ctx, registerTimeout)
	if err := syncCommands(rctx, a.pool, a.discord, a.commands, a.log); err != nil && ctx.Err() == nil {
		a.log.ErrorContext(ctx, "herald could not register its commands; Discord shows the ones registered before until the next start", "err", err)
	}
	cancelRegister()
	gateway.RouteLibraryLogs(a.log)
	rt, err := transport.Rewrite(a.engine.RoundTripper(), a.cfg.DiscordAPI)
	if err != nil {
		return errors.Join(fmt.Errorf("app: HERALD_DISCORD_API: %w", err), stopWork())
	}
	count, answer, err := a.shardCount(ctx, rt)
	if err != nil {
		if ctx.Err() != nil {
			return errors.Join(stopWork(), a.stopAdmin())
		}
		return errors.Join(gatewayFatal(err), stopWork(), a.stopAdmin())
	}
	if a.partitions != nil {
		if err := a.partitions.SetShards(ctx, count); err != nil {
			return errors.Join(fmt.Errorf("app: route jobs by shard: %w", err), stopWork(), a.stopAdmin())
		}
	}
	// The shards are spread over every herald on the token; this
	// process serves its share until it stops, then hands it over.
	sctx, stopShards := context.WithCancel(ctx)
	defer stopShards()
	shardsDone := make(chan error, 1)
	go func() { shardsDone <- cl.Shards(sctx, count, a.serveShard(rt, count, answer, cl)) }()
	interactionsErr := make(chan error, 1)
	a.serveInteractions(interactionsErr)
	a.log.InfoContext(ctx, "herald running", "admin", a.AdminAddr(), "interactions", a.InteractionsAddr(), "process", cl.ID(), "shards", count,
		"job_kinds", kinds, "config", a.cfg)

	select {
	case <-ctx.Done():
		a.log.Info("shutting down", "timeout", a.cfg.ShutdownTimeout)
		err = nil
	case err = <-serveErr:
		err = fmt.Errorf("app: admin HTTP: %w", err)
	case err = <-interactionsErr:
		err = fmt.Errorf("app: interactions endpoint: %w", err)
	case err = <-shardsDone:
		// A shard's session ended for good (a fatal close code).
		shardsDone <- nil
	}
	// No new interactions first, then let running jobs finish their calls.
	stopShards()
	err = errors.Join(err, <-shardsDone, a.stopInteractions(), stopWork())
	return errors.Join(err, a.stopAdmin())
}

// stopAdmin lets in-flight admin requests finish, then closes the server.
func (a *App) stopAdmin() error {
	ctx, cancel := context.WithTimeout(context.Background(), stopGrace)
	defer cancel()
	if err := a.admin.Shutdown(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// schemaPoll is how often a herald waiting for migrations looks again.
const schemaPoll = 5 * time.Second

// waitForSchema holds the start until the database schema matches this
// binary, so a herald that starts before its migration job stays up and
// unready (saying why on /readyz) instead of crashing in a loop. It
// returns ctx's error if herald is stopped meanwhile.
func (a *App) waitForSchema(ctx context.Context) error {
	for {
		err := a.migrator.Check(ctx)
		if err == nil {
			return nil
		}
		a.log.WarnContext(ctx, "waiting for the database schema", "reason", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(schemaPoll):
		}
	}
}

func (a *App) stopRiver(kinds []string) error {
	if len(kinds) == 0 {
		return nil
	}
	return work.Stop(a.river, a.cfg.ShutdownTimeout, stopGrace)
}

// ready is the /readyz check: Discord still takes the bot's requests,
// then stored: the database answers, both schemas match this binary and
// the gateway is connected. The engine's view costs nothing and is read
// at every probe, so a rejected token shows at once; stored, which asks
// Postgres, is cached. Open circuits and the global gate hold only some
// requests: they are notes, not failures.
func (a *App) ready(stored adminhttp.ReadyFunc) adminhttp.ReadyFunc {
	return func(ctx context.Context) ([]string, error) {
		h := a.engine.Health()
		var notes []string
		for _, c := range h.OpenCircuits {
			notes = append(notes, fmt.Sprintf("circuit %s for %s since %s after %d failures", c.State, c.Route, c.Since.Format(time.RFC3339), c.ConsecutiveFailures))
		}
		if h.GlobalGateUntil.After(h.Time) {
			notes = append(notes, "Discord's global rate limit holds requests until "+h.GlobalGateUntil.Format(time.RFC3339Nano))
		}
		if h.Degraded {
			notes = append(notes, fmt.Sprintf("Discord failed herald's last requests on %d routes: requests below interactive priority go one at a time", h.Failing))
		}
		if err := h.Err(); err != nil {
			return notes, err
		}
		more, err := stored(ctx)
		return append(notes, more...), err
	}
}

// storedReady is the part of ready that asks Postgres.
func (a *App) storedReady(ctx context.Context) ([]string, error) {
	if err := a.pool.Ping(ctx); err != nil {
		return nil, fmt.Errorf("database unreachable: %w", err)
	}
	if err := a.migrator.Check(ctx); err != nil {
		return nil, err
	}
	return a.gatewayReady(ctx)
}

func (a *App) close() {
	for _, ln := range []net.Listener{a.adminLn, a.interactionsLn} {
		if ln != nil {
			ln.Close()
		}
	}
	a.services.Close()
	if a.migrator != nil {
		a.migrator.Close()
	}
	for _, p := range []*pgxpool.Pool{a.fastPool, a.clusterPool, a.pool} {
		if p != nil {
			p.Close()
		}
	}
}

// Migrate creates the database if it is missing and applies every pending
// migration, River's and herald's.
func Migrate(ctx context.Context, cfg config.Config, log *slog.Logger) error {
	created, err := store.EnsureDatabase(ctx, cfg.DatabaseURL.Reveal())
	if err != nil {
		return err
	}
	if created {
		log.InfoContext(ctx, "created database", "url", cfg.DatabaseURL)
	}
	pool, err := store.Open(ctx, cfg.DatabaseURL.Reveal(), store.Pool{})
	if err != nil {
		return err
	}
	defer pool.Close()
	m, err := store.NewMigrator(pool, log)
	if err != nil {
		return err
	}
	defer m.Close()
	return m.Up(ctx)
}
