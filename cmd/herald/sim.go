package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/herald-bot/herald/internal/config"
	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/logging"
)

// simFlags are `herald sim`'s settings.
type simFlags struct {
	addr      string
	fixture   string
	token     string
	timeScale float64
}

func (f *simFlags) register(fs *flag.FlagSet, defaultAddr string) {
	fs.StringVar(&f.addr, "addr", defaultAddr, "listen address of the simulator")
	fs.StringVar(&f.fixture, "fixture", "default", `guild to load at start: "default" or "none"`)
	fs.StringVar(&f.token, "token", "", "the only bot token accepted (others get 401); empty accepts any")
	fs.Float64Var(&f.timeScale, "time-scale", 1, "multiplies every rate-limit window and deadline (0.1 = ten times faster)")
}

func (f *simFlags) validate() error {
	if f.fixture != "default" && f.fixture != "none" {
		return fmt.Errorf("--fixture must be default or none, got %q", f.fixture)
	}
	if f.timeScale <= 0 || f.timeScale > 100 {
		return fmt.Errorf("--time-scale must be above 0 and at most 100, got %v", f.timeScale)
	}
	return nil
}

// runningSim is a simulator serving on a local address.
type runningSim struct {
	*sim.Server
	url   string
	guild *sim.FixtureResult // the loaded fixture, nil for --fixture none
	done  <-chan error       // the serve error, once ctx ends
}

// startSim listens, loads the fixture and serves the simulator until ctx
// ends.
func startSim(ctx context.Context, f simFlags, log *slog.Logger) (*runningSim, error) {
	s := sim.New(sim.Options{Token: f.token, TimeScale: f.timeScale, Logger: log})
	rs := &runningSim{Server: s}
	if f.fixture == "default" {
		res, err := s.LoadFixture(sim.DefaultFixture())
		if err != nil {
			return nil, err
		}
		rs.guild = &res
	}
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return nil, fmt.Errorf("simulator: %w", err)
	}
	rs.url = "http://" + ln.Addr().String()
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 5 * time.Second}
	done := make(chan error, 1)
	rs.done = done
	go func() {
		err := srv.Serve(ln)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		done <- err
	}()
	go func() {
		<-ctx.Done()
		s.Close() // closes gateway sessions, which Shutdown does not track
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(shutdown)
	}()
	return rs, nil
}

func cmdSim(ctx context.Context, args []string, e env) int {
	fs := newFlagSet("sim", "Runs the Discord simulator on its own: REST under /api/v10 (and v9), the gateway, and the control API under /_sim/.")
	var f simFlags
	f.register(fs, "127.0.0.1:7000")
	if ok, code := parseFlags(fs, args, e); !ok {
		return code
	}
	if err := f.validate(); err != nil {
		fmt.Fprintf(e.stderr, "herald sim: %v\n", err)
		fs.Usage()
		return exitUsage
	}
	log := simLogger(e)
	s, err := startSim(ctx, f, log)
	if err != nil {
		log.Error("simulator cannot start", "err", err)
		return exitFail
	}
	log.Info("Discord simulator listening", "url", s.url, "rest", s.url+"/api/v10", "control", s.url+"/_sim/", "time_scale", f.timeScale)
	if s.guild != nil {
		// The fixture's ids, for scripts driving the control API.
		json.NewEncoder(e.stdout).Encode(s.guild)
	}
	if err := <-s.done; err != nil {
		log.Error("simulator stopped", "err", err)
		return exitFail
	}
	return exitOK
}

// simLogger honours LOG_FORMAT and LOG_LEVEL without requiring the bot's
// settings.
func simLogger(e env) *slog.Logger {
	cfg, err := config.LoadForMigrate(e.lookup)
	if err != nil {
		return logging.New(e.stderr, "text", slog.LevelInfo)
	}
	return logging.New(e.stderr, cfg.LogFormat, cfg.LogLevel)
}
