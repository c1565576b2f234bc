package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/freeport"
	"github.com/herald-bot/herald/internal/pgserver"
)

// Token is the bot token the demo's simulator accepts; it is not a
// Discord token.
const Token = "herald-demo-token"

// Options are what the caller provides besides the scenario.
type Options struct {
	// Herald returns a command that runs `herald run`; the demo adds the
	// environment and starts it, and kills and restarts it.
	Herald func() *exec.Cmd
	// ExtraEnv is added to herald's environment.
	ExtraEnv []string
	// HeraldLog receives herald's log (stderr); nil discards it.
	HeraldLog io.Writer
	// Progress is called every ProgressEvery while the scenario plays.
	Progress      func(Progress)
	ProgressEvery time.Duration
	// SimAddr is the simulator's listen address (default 127.0.0.1:0).
	SimAddr string
	// Log receives the demo's own notes.
	Log *slog.Logger
}

// Demo is a running simulator, database and herald, with the demo guild
// set up.
type Demo struct {
	sc  Scenario
	opt Options

	sim    *sim.Server
	srv    *http.Server
	SimURL string

	cluster   *pgserver.Cluster
	serverURL string // where the demo's database was created
	dbName    string
	DBURL     string
	db        *pgxpool.Pool

	HTTPAddr, ProxyAddr string
	env                 []string

	mu     sync.Mutex
	herald *exec.Cmd
	exited chan struct{}

	g     guild
	start time.Time // the scenario's first moment, after the setup

	// twin is the naive bot's side of the demo: its own simulator and
	// guild, the same scenario. On the twin, naive is its bot.
	twin  *Demo
	naive *naiveBot
}

// Start starts the simulator with the demo guild, finds Postgres by
// pgserver's rules and creates a database of the demo's own on it, starts
// herald, and sets up the role menus, the ticket panel and the services'
// webhooks through herald's commands and Discord's API. Close undoes it.
func Start(ctx context.Context, sc Scenario, opt Options) (d *Demo, err error) {
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	if opt.Herald == nil {
		return nil, errors.New("demo: no way to run herald")
	}
	if opt.Log == nil {
		opt.Log = slog.New(slog.DiscardHandler)
	}
	if opt.HeraldLog == nil {
		opt.HeraldLog = io.Discard
	}
	if opt.SimAddr == "" {
		opt.SimAddr = "127.0.0.1:0"
	}
	d = &Demo{sc: sc, opt: opt}
	defer func() {
		if err != nil {
			d.Close()
		}
	}()
	if err := d.startSim(); err != nil {
		return d, err
	}
	if err := d.createDatabase(ctx); err != nil {
		return d, err
	}
	if err := d.loadGuild(); err != nil {
		return d, err
	}
	if d.HTTPAddr, err = freeport.Addr(); err != nil {
		return d, err
	}
	if d.ProxyAddr, err = freeport.Addr(); err != nil {
		return d, err
	}
	d.env = append(os.Environ(),
		"DISCORD_TOKEN="+Token, "DATABASE_URL="+d.DBURL,
		"HERALD_DISCORD_API="+d.SimURL+"/api/v10", "HERALD_AUTO_MIGRATE=true",
		"HERALD_HTTP_ADDR="+d.HTTPAddr, "HERALD_PROXY_ADDR="+d.ProxyAddr, "HERALD_PROXY_ALLOW=*", "HERALD_PROXY_KEY_RATE=100000", "HERALD_PROXY_KEY_BYTES_RATE=1000000000000",
		// Discord's clocks run at the simulator's scale: the global limit's
		// second, an interaction token's life.
		"HERALD_DISCORD_TIME_SCALE="+strconv.FormatFloat(sc.TimeScale, 'f', -1, 64),
		// A job whose process died runs again within seconds, not minutes.
		"HERALD_JOB_TIMEOUT=interactive=5s,events=5s,sync=5s,background=5s", "HERALD_SHUTDOWN_TIMEOUT=2s",
		"LOG_FORMAT=json", "LOG_LEVEL=warn")
	d.env = append(d.env, opt.ExtraEnv...)
	if err := d.startHerald(ctx); err != nil {
		return d, err
	}
	if d.db, err = pgxpool.New(ctx, d.DBURL); err != nil {
		return d, fmt.Errorf("demo database: %w", err)
	}
	if err := d.setUp(ctx); err != nil {
		return d, fmt.Errorf("demo setup: %w", err)
	}
	if d.twin, err = startNaive(sc, opt); err != nil {
		return d, fmt.Errorf("demo setup, the naive bot: %w", err)
	}
	return d, nil
}

// startNaive starts the naive bot's side: a simulator with the same
// guild, the bot's menus and panel posted, the services' webhooks made.
func startNaive(sc Scenario, opt Options) (*Demo, error) {
	opt.SimAddr = "127.0.0.1:0"
	t := &Demo{sc: sc, opt: opt}
	if err := t.startSim(); err != nil {
		return t, err
	}
	if err := t.loadGuild(); err != nil {
		return t, err
	}
	t.naive = newNaiveBot(t.SimURL, &t.g)
	if err := t.naive.open(); err != nil {
		return t, err
	}
	if err := t.naive.setUp(t); err != nil {
		return t, err
	}
	return t, t.createServices()
}

func (d *Demo) startSim() error {
	d.sim = sim.New(sim.Options{Token: Token, TimeScale: d.sc.TimeScale, Logger: d.opt.Log.With("component", "sim")})
	ln, err := net.Listen("tcp", d.opt.SimAddr)
	if err != nil {
		return fmt.Errorf("simulator: %w", err)
	}
	d.SimURL = "http://" + ln.Addr().String()
	d.srv = &http.Server{Handler: d.sim, ReadHeaderTimeout: 5 * time.Second}
	go d.srv.Serve(ln)
	return nil
}

// createDatabase finds a server as the tests do and names a database of
// this run on it; herald creates and migrates it when it starts.
func (d *Demo) createDatabase(ctx context.Context) error {
	url, cluster, err := pgserver.System().Resolve(ctx)
	if err != nil {
		return err
	}
	d.serverURL, d.cluster = url, cluster
	d.dbName = fmt.Sprintf("herald_demo_%d_%d", os.Getpid(), time.Now().Unix())
	d.DBURL, err = pgserver.WithDatabase(url, d.dbName)
	return err
}

// startHerald starts herald as a child process and waits until it is
// ready.
func (d *Demo) startHerald(ctx context.Context) error {
	cmd := d.opt.Herald()
	cmd.Env = d.env
	cmd.Stdout = d.opt.HeraldLog
	cmd.Stderr = d.opt.HeraldLog
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("herald: %w", err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	d.mu.Lock()
	d.herald, d.exited = cmd, exited
	d.mu.Unlock()
	deadline := time.Now().Add(60 * time.Second)
	for {
		select {
		case <-exited:
			return fmt.Errorf("herald exited before it was ready (%s)", cmd.ProcessState)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if res, err := http.Get("http://" + d.HTTPAddr + "/readyz"); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return errors.New("herald not ready after 60s")
		}
	}
}

// kill9 kills herald with SIGKILL, as a crash would, and waits for it to
// be gone.
func (d *Demo) kill9() {
	d.mu.Lock()
	cmd, exited := d.herald, d.exited
	d.mu.Unlock()
	cmd.Process.Signal(syscall.SIGKILL)
	<-exited
}

// stopHerald stops herald gracefully.
func (d *Demo) stopHerald() {
	d.mu.Lock()
	cmd, exited := d.herald, d.exited
	d.herald = nil
	d.mu.Unlock()
	if cmd == nil {
		return
	}
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		<-exited
	}
}

// Close stops herald and the simulator and removes the demo's database
// and, if one was started, the throwaway cluster.
func (d *Demo) Close() error {
	if d.twin != nil {
		d.twin.Close()
	}
	if d.naive != nil {
		d.naive.crash()
	}
	d.stopHerald()
	if d.db != nil {
		d.db.Close()
	}
	if d.srv != nil {
		d.sim.Close()
		d.srv.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var errs []error
	if d.dbName != "" {
		if conn, err := pgx.Connect(ctx, d.serverURL); err == nil {
			_, err = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{d.dbName}.Sanitize()+" WITH (FORCE)")
			errs = append(errs, err, conn.Close(ctx))
		}
	}
	if d.cluster != nil {
		errs = append(errs, d.cluster.Destroy(ctx))
	}
	return errors.Join(errs...)
}

// Guide is what someone driving the kept simulator and herald by hand
// needs: the addresses, and one of each interaction the scenario made.
type Guide struct {
	SimURL, AdminURL, ProxyURL, GuildID string
	// Click is a member clicking a role menu's first button; Open a
	// member clicking the ticket panel; both for POST /_sim/interactions.
	Click, Open sim.InteractionRequest
	// Webhook is a service's webhook URL through the proxy.
	Webhook     string
	DatabaseURL string
}

// Guide describes the running demo.
func (d *Demo) Guide() Guide {
	m := d.g.menus[0]
	last := d.g.members[len(d.g.members)-1]
	s := d.g.services[0]
	return Guide{SimURL: d.SimURL, AdminURL: "http://" + d.HTTPAddr, ProxyURL: "http://" + d.ProxyAddr, GuildID: d.g.ID,
		Click: sim.InteractionRequest{GuildID: d.g.ID, ChannelID: d.g.roles, UserID: last, Kind: "component",
			CustomID: m.buttons[0], MessageID: m.messageID},
		Open: sim.InteractionRequest{GuildID: d.g.ID, ChannelID: d.g.help, UserID: last, Kind: "component",
			CustomID: d.g.panel.Components[0].(*discordgo.ActionsRow).Components[0].(*discordgo.Button).CustomID, MessageID: d.g.panel.ID},
		Webhook:     "http://" + d.ProxyAddr + "/api/webhooks/" + s.hookID + "/" + s.hookToken,
		DatabaseURL: d.DBURL,
	}
}
