package app

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/herald-bot/herald/internal/config"
	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/discord/simtest"
	"github.com/herald-bot/herald/internal/store/storetest"
	"github.com/herald-bot/herald/internal/testsupport/wait"
)

// served is how many shards a serves with a ready session.
func (a *App) served() int {
	a.sessions.mu.Lock()
	defer a.sessions.mu.Unlock()
	n := 0
	for _, gw := range a.sessions.by {
		if gw.Ready() == nil {
			n++
		}
	}
	return n
}

// Two herald processes on one token and one database split the shards;
// when one stops, the other serves them all.
func TestTwoProcessesSplitTheShards(t *testing.T) {
	t.Parallel()
	s := simtest.New(t)
	s.SetApplicationFlags(simtest.PortalIntents)
	s.CreateGuild(sim.DefaultFixture())
	// Each shard its own identify key: a handover does not wait 5 s for
	// the turn the first shard took.
	concurrency := 2
	s.SetSessionStartLimit(sim.StartLimitChange{MaxConcurrency: &concurrency})
	dbURL := storetest.URL(t)
	cfg := func() config.Config {
		c, err := LoadConfig(func(k string) (string, bool) {
			v, ok := map[string]string{"DISCORD_TOKEN": simtest.Token, "DATABASE_URL": dbURL, "HERALD_DISCORD_API": s.URL + "/api/v10",
				"HERALD_HTTP_ADDR": "127.0.0.1:0", "HERALD_SHUTDOWN_TIMEOUT": "2s", "HERALD_SHARD_COUNT": "2"}[k]
			return v, ok
		})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	var apps [2]*App
	var stops [2]context.CancelFunc
	var dones [2]chan error
	for i := range apps {
		ctx, cancel := context.WithCancel(t.Context())
		a, err := New(ctx, cfg(), slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		apps[i], stops[i], dones[i] = a, cancel, make(chan error, 1)
		go func() { dones[i] <- a.Run(ctx) }()
		t.Cleanup(func() { cancel(); <-dones[i] })
	}
	// A handover costs an IDENTIFY, paced 5 s per key across processes
	// as Discord's max_concurrency asks: give it more than Until's 20 s
	// on a loaded machine.
	wait.Within(t, time.Minute, "one shard each", func() bool { return apps[0].served() == 1 && apps[1].served() == 1 })
	stops[0]()
	if err := <-dones[0]; err != nil {
		t.Fatal(err)
	}
	dones[0] <- nil
	wait.Within(t, time.Minute, "both shards on the process left", func() bool { return apps[1].served() == 2 })
}
