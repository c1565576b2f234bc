package app

import (
	"context"
	"log/slog"
	"sync"
	"testing"

	"github.com/bwmarrin/discordgo"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/herald-bot/herald/commands"
	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/discord/simtest"
	"github.com/herald-bot/herald/internal/store/storetest"
	"github.com/herald-bot/herald/internal/testsupport/wait"
)

// count is how many requests the simulator saw for method and route.
func count(s *simtest.Sim, method, route string) int {
	n := 0
	for _, r := range s.Server.Requests() {
		if r.Method == method && r.Route == route {
			n++
		}
	}
	return n
}

const commandsRoute = "/applications/{application_id}/commands"

// `herald run` alone registers herald's commands; a restart reads them
// and writes nothing; processes starting together write once.
func TestRunRegistersCommands(t *testing.T) {
	t.Parallel()
	s := simtest.New(t)
	s.SetApplicationFlags(simtest.PortalIntents)
	s.CreateGuild(sim.DefaultFixture())
	cfg := configFor(t, s, map[string]string{"DATABASE_URL": storetest.URL(t)})

	start := func() (stop func()) {
		ctx, cancel := context.WithCancel(t.Context())
		a, err := New(ctx, cfg, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- a.Run(ctx) }()
		wait.Until(t, "ready", func() bool { code, _ := readyz(t, a.AdminAddr()); return code == 200 })
		return func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run = %v", err)
			}
		}
	}
	stop := start()
	var listed []*discordgo.ApplicationCommand
	s.Do("GET", "/applications/"+s.ApplicationID()+"/commands?with_localizations=true", nil).JSON(t, &listed)
	declared := mustDeclared(t)
	if !commands.Same(declared, listed) || len(listed) == 0 {
		t.Fatalf("Discord lists %d commands that are not herald's %d", len(listed), len(declared))
	}
	if n := count(s, "PUT", commandsRoute); n != 1 {
		t.Fatalf("herald run registered %d times, want once", n)
	}
	stop()
	gets := count(s, "GET", commandsRoute)
	start()()
	if n := count(s, "PUT", commandsRoute); n != 1 {
		t.Fatalf("a restart registered again (%d writes)", n)
	}
	if count(s, "GET", commandsRoute) != gets+1 {
		t.Fatal("a restart did not compare with what Discord has")
	}
}

// Processes comparing at the same moment take turns under an advisory
// lock: the first writes, the others find the commands registered. Each
// read is slowed so that without the lock all would read before any
// writes.
func TestSyncCommandsTakesTurns(t *testing.T) {
	t.Parallel()
	s := simtest.New(t)
	s.SetFault(sim.Fault{Route: "GET " + commandsRoute, LatencyMS: 200})
	cfg := configFor(t, s, nil)
	db, err := pgxpool.New(t.Context(), cfg.DatabaseURL.Reveal())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	declared := mustDeclared(t)
	var wg sync.WaitGroup
	for range 3 {
		// An engine each, as separate processes have.
		_, discord := newDiscord(cfg, slog.New(slog.DiscardHandler), nil, s.ApplicationID())
		wg.Go(func() {
			if err := syncCommands(t.Context(), db, discord, declared, slog.New(slog.DiscardHandler)); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := count(s, "PUT", commandsRoute); n != 1 {
		t.Fatalf("three processes registered %d times, want once", n)
	}
}

func mustDeclared(t *testing.T) []*discordgo.ApplicationCommand {
	t.Helper()
	cmds, err := declaredCommands()
	if err != nil {
		t.Fatal(err)
	}
	return cmds
}
