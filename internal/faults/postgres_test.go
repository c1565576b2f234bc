package faults_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/heraldtest"
	"github.com/herald-bot/herald/internal/testsupport/pgtest"
)

// faultEnv is the configuration the fault tests run herald with: small
// lanes, follow-ups as their own messages, and seconds-long job timeouts
// so a job whose process died is rescued within the test.
var faultEnv = map[string]string{
	"HERALD_COALESCE_WINDOW": "0s", "HERALD_JOB_TIMEOUT": "interactive=5s,events=5s,sync=5s,background=5s",
}

// Postgres crashes (an immediate stop of a cluster of the test's own)
// in the middle of a burst and comes back: herald recovers with no help,
// /readyz goes 503 then 200, the clicks during the outage are answered
// "busy", and every acknowledged click's effects happen exactly once.
func TestPostgresCrashMidBurst(t *testing.T) {
	t.Parallel()
	cluster := pgtest.StartCluster(t)
	h := heraldtest.New(t, heraldtest.WithDatabase(cluster.URL()), heraldtest.WithFeatures(effects()), heraldtest.WithEnv(faultEnv))
	h.Sim.SetLimits(sim.LimitChange{Route: "POST /channels/{channel_id}/messages", Limit: 1000, WindowMS: 1000})
	msg := h.Post(h.Channel("general"), map[string]any{"content": "act"})
	c := &clicks{s: h.Sim, g: h.Guild, msg: msg.ID}
	ready := func() int {
		res, err := http.Get("http://" + h.App.AdminAddr() + "/readyz")
		if err != nil {
			return 0
		}
		res.Body.Close()
		return res.StatusCode
	}

	// The sleeps pace the scenario: a second of clicks before the crash,
	// Postgres held down a second while clicks come, and a second of
	// clicks after it is back.
	stop := c.burst(10 * time.Millisecond)
	time.Sleep(time.Second) // paces the scenario: the burst runs before the crash
	down := outage{from: time.Now()}
	cluster.Crash(t)
	h.Eventually("/readyz 503 while Postgres is down", func() bool { return ready() == http.StatusServiceUnavailable })
	time.Sleep(time.Second) // paces the scenario: Postgres stays down while clicks come
	cluster.Start(t)
	h.Eventually("/readyz 200 once Postgres is back", func() bool { return ready() == http.StatusOK })
	down.to = time.Now()
	time.Sleep(time.Second) // paces the scenario: clicks go on after the recovery
	stop()

	drained(t, h.DB)
	r := c.check(t, down)
	t.Logf("load: %d clicks at 100/s; faults: 1 Postgres crash (immediate stop, ~1 s down); requests to Discord: %d; %s",
		r.interactions, len(h.Sim.Server.Requests()), r)
	for _, p := range r.problems {
		t.Error(p)
	}
	if r.busy == 0 {
		t.Error("no click was answered busy: the outage never reached the fast path")
	}
}

// Postgres black-holed mid-burst (the proxy holds every packet, open
// connections included, instead of closing): the fast path still answers
// every click within Discord's 3 s, "busy" when it cannot make the work
// durable; no job hangs past its timeout; after the partition heals the
// acknowledged clicks' effects happen exactly once.
func TestPostgresBlackHoledMidBurst(t *testing.T) {
	t.Parallel()
	h := heraldtest.New(t, heraldtest.WithDatabaseProxy(), heraldtest.WithFeatures(effects()), heraldtest.WithEnv(faultEnv))
	h.Sim.SetLimits(sim.LimitChange{Route: "POST /channels/{channel_id}/messages", Limit: 1000, WindowMS: 1000})
	msg := h.Post(h.Channel("general"), map[string]any{"content": "act"})
	c := &clicks{s: h.Sim, g: h.Guild, msg: msg.ID}

	const held = 4 * time.Second
	stop := c.burst(10 * time.Millisecond)
	time.Sleep(time.Second) // paces the scenario: the burst runs before the partition
	down := outage{from: time.Now()}
	h.DBProxy.Hold()
	time.Sleep(held) // paces the scenario: Postgres stays black-holed for held while clicks come
	h.DBProxy.Release()
	down.to = time.Now()
	time.Sleep(2 * time.Second) // paces the scenario: clicks go on after the partition heals
	stop()

	drained(t, h.DB)
	r := c.check(t, down)
	t.Logf("load: %d clicks at 100/s; faults: Postgres black-holed for %s; requests to Discord: %d; %s",
		r.interactions, held, len(h.Sim.Server.Requests()), r)
	for _, p := range r.problems {
		t.Error(p)
	}
	if r.unanswered != 0 || r.slowestAckMS > 3000 {
		t.Errorf("%d clicks unanswered, slowest answer %.0f ms: the fast path hung on the partition", r.unanswered, r.slowestAckMS)
	}
	if r.busy+r.unconfirmed == 0 {
		t.Error("no click was answered busy or unconfirmed: the partition never reached the fast path")
	}
}
