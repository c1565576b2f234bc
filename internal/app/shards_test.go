package app

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/herald-bot/herald/internal/config"
	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/discord/simtest"
	"github.com/herald-bot/herald/internal/store/storetest"
	"github.com/herald-bot/herald/internal/testsupport/wait"
	"github.com/herald-bot/herald/internal/work"
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

// Two herald processes on one token and one database split the shards,
// and each works the jobs of its shards' guilds: a command in a guild of
// either shard posts its status board from the process serving that
// shard. When one process stops, the other serves them all.
func TestTwoProcessesSplitTheShards(t *testing.T) {
	t.Parallel()
	s := simtest.New(t)
	s.SetApplicationFlags(simtest.PortalIntents)
	var guilds [2]*sim.FixtureResult // one on each shard
	for guilds[0] == nil || guilds[1] == nil {
		g := s.CreateGuild(sim.DefaultFixture())
		id, _ := strconv.ParseUint(g.ID, 10, 64)
		guilds[work.ShardOf(id, 2)] = &g
	}
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
	for shard, g := range guilds {
		general, owner := g.Channel("general"), g.Member("owner")
		s.Interact(sim.InteractionRequest{GuildID: g.ID, ChannelID: general, UserID: owner, Kind: "command", Name: "herald",
			Options: []any{map[string]any{"name": "board", "type": 1, "options": []any{map[string]any{"name": "channel", "type": 7, "value": general}}}}})
		wait.Within(t, time.Minute, "the status board of the guild on shard "+strconv.Itoa(shard), func() bool {
			for _, m := range s.Messages(general) {
				if strings.HasPrefix(m.Content, "**herald status**") {
					return true
				}
			}
			return false
		})
		server := apps[0]
		if apps[1].sessions.get(shard) != nil {
			server = apps[1]
		}
		var queue, ranOn string
		if err := server.pool.QueryRow(t.Context(), `SELECT queue, attempted_by[cardinality(attempted_by)] FROM river_job
			WHERE kind = 'status_board' AND metadata->>'guild_id' = $1 AND attempted_by IS NOT NULL ORDER BY id LIMIT 1`, g.ID).Scan(&queue, &ranOn); err != nil {
			t.Fatal(err)
		}
		if want := work.PartitionQueue(work.Sync, shard); queue != want || ranOn != server.processID {
			t.Errorf("the board job of a guild on shard %d ran in %q on %s, want %q on %s, the process serving the shard", shard, queue, ranOn, want, server.processID)
		}
	}
	stops[0]()
	if err := <-dones[0]; err != nil {
		t.Fatal(err)
	}
	dones[0] <- nil
	wait.Within(t, time.Minute, "both shards on the process left", func() bool { return apps[1].served() == 2 })
}
