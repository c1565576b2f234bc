package webhookproxy_test

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/discord/simtest"
	"github.com/herald-bot/herald/internal/heraldtest"
	"github.com/herald-bot/herald/internal/store/storetest"
	"github.com/herald-bot/herald/internal/testsupport/logbuf"
	"github.com/herald-bot/herald/internal/testsupport/wait"
)

// childEnv makes the test binary run as `herald run`, for the parent
// test to kill.
const childEnv = "HERALD_PROXY_CHILD"

// kill -9 of a real herald process at random points of a burst through
// the proxy, and a restart after each: every request answered 204 is
// delivered, and no message twice.
func TestKill9MidBurst(t *testing.T) {
	t.Parallel()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed))
	// Windows fifty times shorter: the test is about crashes, and the
	// channel's shared webhook limit (30 a minute) would make it slow.
	s := simtest.New(t, simtest.WithOptions(sim.Options{TimeScale: 0.02}))
	// Reading a lost answer back needs the Message Content intent
	// (TestLostAnswerWithoutMessageContent).
	s.SetApplicationFlags(simtest.PortalIntents)
	s.ShortIdentifyWindow()
	g := s.CreateGuild(sim.DefaultFixture())
	general := g.Channel("general")
	var hook discordgo.Webhook
	s.Do(http.MethodPost, "/channels/"+general+"/webhooks", map[string]any{"name": "alerts"}).JSON(t, &hook)
	dbURL := storetest.URL(t)
	proxyAddr := heraldtest.FreeAddr(t)
	env := append(os.Environ(), childEnv+"=1",
		"DISCORD_TOKEN="+simtest.Token, "DATABASE_URL="+dbURL,
		"HERALD_DISCORD_API="+s.URL+"/api/v10", "HERALD_IDENTIFY_WINDOW="+simtest.IdentifyWindow.String(),
		// Small pools: the tests of other packages share the Postgres.
		"HERALD_WORKERS_INTERACTIVE=4", "HERALD_WORKERS_EVENTS=4", "HERALD_WORKERS_SYNC=1", "HERALD_WORKERS_BACKGROUND=1", "HERALD_DB_FASTPATH_CONNS=4",
		"HERALD_SHUTDOWN_TIMEOUT=1s", "HERALD_JOB_TIMEOUT=interactive=5s,events=5s,sync=5s,background=5s",
		"HERALD_PROXY_ADDR="+proxyAddr, "HERALD_PROXY_ALLOW=*", "LOG_LEVEL=error")
	var logs logbuf.Buffer
	defer func() {
		if t.Failed() {
			t.Logf("herald's errors:\n%s", logs.String())
		}
	}()

	var mu sync.Mutex
	acked := map[string]bool{}
	url := "http://" + proxyAddr + "/api/webhooks/" + hook.ID + "/" + hook.Token
	burst := func(cycle int) (stop func()) {
		done, finished := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(finished)
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				case <-time.After(5 * time.Millisecond):
				}
				content := fmt.Sprintf("k%d-%d", cycle, i)
				res, err := http.Post(url, "application/json", strings.NewReader(`{"content":"`+content+`"}`))
				if err != nil {
					continue
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode == http.StatusNoContent {
					mu.Lock()
					acked[content] = true
					mu.Unlock()
				}
			}
		}()
		return func() { close(done); <-finished }
	}
	const kills = 5
	for cycle := range kills {
		herald := heraldtest.StartChild(t, env, &logs)
		stop := burst(cycle)
		time.Sleep(time.Duration(100+rng.IntN(400)) * time.Millisecond)
		herald.Process.Signal(syscall.SIGKILL)
		herald.Wait()
		stop()
	}
	herald := heraldtest.StartChild(t, env, &logs)
	defer func() {
		herald.Process.Signal(syscall.SIGTERM)
		herald.Wait()
	}()
	db, err := pgxpool.New(t.Context(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// A drain job killed mid-run holds its target until River's rescuer
	// (every 30 s) runs it again.
	pending := -1
	wait.WithinShowing(t, drainTimeout, "every delivery out of the pending state", func() bool {
		return db.QueryRow(t.Context(), `SELECT count(*) FROM webhookproxy_deliveries WHERE state = 'pending'`).Scan(&pending) == nil && pending == 0
	}, func() string { return fmt.Sprintf("%d still pending", pending) })
	seen := map[string]int{}
	for _, m := range s.Messages(general) {
		seen[m.Content]++
	}
	var lost, dup []string
	for c := range acked {
		if seen[c] == 0 {
			lost = append(lost, c)
		}
	}
	for c, n := range seen {
		if n > 1 {
			dup = append(dup, c)
		}
	}
	var dead int
	db.QueryRow(t.Context(), `SELECT count(*) FROM webhookproxy_deliveries WHERE state = 'dead'`).Scan(&dead)
	t.Logf("%d kill -9; %d requests acknowledged; %d messages; lost %d, duplicated %d, dead-lettered %d",
		kills, len(acked), len(seen), len(lost), len(dup), dead)
	if len(acked) == 0 {
		t.Error("no request was acknowledged")
	}
	if len(lost) > 0 || len(dup) > 0 || dead > 0 {
		t.Errorf("lost %v, duplicated %v, dead-lettered %d", lost, dup, dead)
	}
}

// drainTimeout bounds the wait for the last deliveries after the crashes:
// River's rescuer period, the lanes' backstop and the deliveries.
const drainTimeout = 90 * time.Second
