package faults_test

import (
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
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
	"github.com/herald-bot/herald/internal/testsupport/pgtest"
)

// childEnv makes the test binary run as `herald run` with the effects
// feature, for the parent test to kill.
const childEnv = "HERALD_FAULT_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		os.Exit(heraldtest.RunChild(effects()))
	}
	pgtest.Main(m)
}

// kills is how many times the test kills herald: seed 001's promise must
// hold at every point a process can die.
var kills = envInt("HERALD_FAULT_KILLS", 20)

// kill -9 of a real herald process at random points of a burst of clicks,
// each with a message, a reply and a follow-up, and a restart after each:
// every acknowledged click's effects happen exactly once, none twice.
func TestKill9DuringBurst(t *testing.T) {
	t.Parallel()
	rng := faultRand(t)
	s := crashSim(t)
	// The test is about crashes, not rate limits: one channel's messages
	// may go as fast as herald sends them.
	s.SetLimits(sim.LimitChange{Route: "POST /channels/{channel_id}/messages", Limit: 1000, WindowMS: 1000})
	g := s.CreateGuild(sim.DefaultFixture())
	var msg struct{ ID string }
	s.Do("POST", "/channels/"+g.Channel("general")+"/messages", map[string]any{"content": "act"}).JSON(t, &msg)
	dbURL := storetest.URL(t)
	env := childEnvFor(s, dbURL)
	c := &clicks{s: s, g: g, msg: msg.ID}
	var logs logbuf.Buffer
	defer func() {
		if t.Failed() {
			t.Logf("herald's errors:\n%s", logs.String())
		}
	}()
	var points []time.Duration
	for range kills {
		herald := start(t, env, &logs)
		stop := c.burst(10 * time.Millisecond)
		at := time.Duration(50+rng.IntN(450)) * time.Millisecond
		points = append(points, at)
		time.Sleep(at)
		herald.Process.Signal(syscall.SIGKILL)
		herald.Wait()
		stop()
	}
	herald := start(t, env, &logs)
	defer func() {
		herald.Process.Signal(syscall.SIGTERM)
		herald.Wait()
	}()
	db, err := pgxpool.New(t.Context(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	drained(t, db)
	// The database stays up: every answer's write has a known outcome.
	r := c.check(t, outage{})
	t.Logf("load: %d clicks at 100/s; faults: %d kill -9 at %v after each start; requests to Discord: %d; %s",
		r.interactions, kills, points, len(s.Server.Requests()), r)
	for _, p := range r.problems {
		t.Error(p)
	}
	if r.acked == 0 {
		t.Error("no click was acknowledged: the burst never reached herald")
	}
}

// crashSim is the simulator of a test that kills and restarts herald:
// its owner switched the intents on, and a restarted herald may identify
// soon after the one it replaces. Discord asks 5 s between identifies;
// here that would only make the test wait, since it is about crashes.
func crashSim(t *testing.T) *simtest.Sim {
	t.Helper()
	s := simtest.New(t)
	s.SetApplicationFlags(simtest.PortalIntents)
	s.ShortIdentifyWindow()
	return s
}

// settled reports whether Discord saw the interaction answered, or its
// 3 s passed (and a second for an answer in flight): on a loaded machine
// an answer may come too late, which the checks count as unanswered, so
// a batch waits for its answers no longer than Discord does.
func settled(s *simtest.Sim, id string) bool {
	if s.Interaction(id).Acked {
		return true
	}
	at, err := discordgo.SnowflakeTimestamp(id)
	return err == nil && time.Since(at) > 4*time.Second
}

// faultRand is the random source that picks a test's fault points:
// seeded from the clock, or from HERALD_FAULT_SEED to replay a run.
func faultRand(t *testing.T) *rand.Rand {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if s, err := strconv.ParseUint(os.Getenv("HERALD_FAULT_SEED"), 10, 64); err == nil {
		seed = s
	}
	t.Logf("seed %d (HERALD_FAULT_SEED replays it)", seed)
	return rand.New(rand.NewPCG(seed, seed))
}

// childEnvFor is the environment of a `herald run` child on s and the
// database at dbURL, with seconds-long job timeouts so that a job whose
// process died is rescued within the test: 5 s, as 2 s cut off attempts
// that were only slow on a loaded machine, and each such failure backs
// its job off in real time.
func childEnvFor(s *simtest.Sim, dbURL string) []string {
	return append(os.Environ(), childEnv+"=1",
		"DISCORD_TOKEN="+simtest.Token, "DATABASE_URL="+dbURL,
		"HERALD_DISCORD_API="+s.URL+"/api/v10", "HERALD_IDENTIFY_WINDOW="+simtest.IdentifyWindow.String(), "HERALD_COALESCE_WINDOW=0s", "HERALD_SHUTDOWN_TIMEOUT=1s",
		"HERALD_JOB_TIMEOUT=interactive=5s,events=5s,sync=5s,background=5s",
		"HERALD_WORKERS_INTERACTIVE=4", "HERALD_WORKERS_EVENTS=2", "HERALD_WORKERS_SYNC=1", "HERALD_WORKERS_BACKGROUND=1",
		"HERALD_DB_FASTPATH_CONNS=4")
}

// start runs herald as a child process, its errors logged to logs, and
// waits until it is ready.
func start(t *testing.T, env []string, logs io.Writer) *exec.Cmd {
	t.Helper()
	return heraldtest.StartChild(t, append(env, "LOG_LEVEL=error"), logs)
}

func envInt(key string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(key)); err == nil {
		return n
	}
	return def
}
