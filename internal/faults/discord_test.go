package faults_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/herald-bot/herald/internal/app"
	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/heraldtest"
)

// readyz reads herald's readiness: its status code and JSON body.
func readyz(h *heraldtest.Herald) (int, struct {
	Reason string
	Notes  []string
}) {
	var body struct {
		Reason string
		Notes  []string
	}
	res, err := http.Get("http://" + h.App.AdminAddr() + "/readyz")
	if err != nil {
		return 0, body
	}
	defer res.Body.Close()
	json.NewDecoder(res.Body).Decode(&body)
	return res.StatusCode, body
}

// Discord answers 500 to every message create for a while: herald's REST
// stays bounded (the route's circuit opens after a few failures and only
// a probe goes out), /readyz notes the open circuit, the jobs wait instead
// of spending their attempts, and once Discord recovers every
// acknowledged click's effects happen exactly once. The circuit's probe
// comes after 5 s rather than 30 s, so the recovery is not waited for.
func TestDiscord5xxStorm(t *testing.T) {
	t.Parallel()
	const route = "POST /channels/{channel_id}/messages"
	h := heraldtest.New(t, heraldtest.WithFeatures(effects()), heraldtest.WithEnv(faultEnv),
		heraldtest.WithEnv(map[string]string{"HERALD_CIRCUIT_RESET": "5s"}))
	h.Sim.SetLimits(sim.LimitChange{Route: route, Limit: 1000, WindowMS: 1000})
	msg := h.Post(h.Channel("general"), map[string]any{"content": "act"})
	c := &clicks{s: h.Sim, g: h.Guild, msg: msg.ID}
	before := len(h.Sim.Server.Requests())
	h.Sim.SetFault(sim.Fault{Route: route, Status: 500, Rate: 1})
	stormStart := time.Now()
	stop := c.burst(20 * time.Millisecond)
	h.Eventually("/readyz to note the open circuit", func() bool {
		code, body := readyz(h)
		return code == http.StatusOK && strings.Contains(strings.Join(body.Notes, " "), "circuit open for "+route)
	})
	time.Sleep(2 * time.Second) // paces the scenario: clicks go on into the open circuit
	stop()
	failed := 0
	for _, r := range h.Sim.Server.Requests()[before:] {
		if r.Method+" "+r.Route == route && r.Status == http.StatusInternalServerError {
			failed++
		}
	}
	h.Sim.SetFault(sim.Fault{Route: route, Clear: true})
	storm := time.Since(stormStart)
	// A job that failed twice in the storm retries after River's backoff,
	// 16 s: a minute passes at once, as it would before anyone looked.
	h.Clock.Advance(time.Minute)
	drained(t, h.DB)
	r := c.check(t, outage{}) // Postgres is fine: every write's outcome is known
	t.Logf("load: %d clicks at 50/s; faults: every %s answered 500 for %.1f s; requests answered 500: %d; %s",
		r.interactions, route, storm.Seconds(), failed, r)
	if failed > 15 {
		t.Errorf("%d requests met the storm: the circuit should stop them after its threshold", failed)
	}
	for _, p := range r.problems {
		t.Error(p)
	}
}

// The bot token is reset while herald works: the first 401 stops all of
// herald's REST (no flood of invalid requests toward Discord's edge ban)
// and /readyz fails, saying why; the gateway's 4004 then stops herald
// with a FatalError naming the fix (exit status 78), not a reconnect loop.
func TestBotTokenRejected(t *testing.T) {
	t.Parallel()
	h := heraldtest.New(t, heraldtest.WithFeatures(effects()), heraldtest.WithEnv(faultEnv))
	h.Sim.SetLimits(sim.LimitChange{Route: "POST /channels/{channel_id}/messages", Limit: 1000, WindowMS: 1000})
	msg := h.Post(h.Channel("general"), map[string]any{"content": "act"})
	c := &clicks{s: h.Sim, g: h.Guild, msg: msg.ID}
	stop := c.burst(20 * time.Millisecond)
	time.Sleep(time.Second) // paces the scenario: the burst runs before the reset
	before := len(h.Sim.Server.Requests())
	h.Sim.ResetToken("a-new-token")
	// While clicks still come: herald stops at the gateway's 4004, which
	// Discord sends soon after the reset, and its /readyz with it.
	h.Eventually("/readyz 503 naming the token", func() bool {
		code, body := readyz(h)
		return code == http.StatusServiceUnavailable && strings.Contains(body.Reason, "rejected the bot token")
	})
	stop()
	// Jobs keep retrying until herald stops; none may reach Discord. Once
	// herald has stopped, every request it made is counted.
	exited := h.Exited()
	unauthorized := 0
	for _, r := range h.Sim.Server.Requests()[before:] {
		if r.Status == http.StatusUnauthorized {
			unauthorized++
		}
	}
	t.Logf("load: %d clicks at 50/s; faults: bot token reset; 401s answered: %d", len(c.all), unauthorized)
	if unauthorized == 0 || unauthorized > 5 {
		t.Errorf("%d requests got 401 after the reset, want the first few only", unauthorized)
	}
	var fatal *app.FatalError
	if !errors.As(exited, &fatal) || !strings.Contains(fatal.Fix, "Reset Token") {
		t.Errorf("herald stopped with %v, want a FatalError naming the fix", exited)
	}
	if strings.Contains(h.Logs(), "a-new-token") || strings.Contains(h.Logs(), "simtest-bot-token") {
		t.Error("a token reached the logs")
	}
}
