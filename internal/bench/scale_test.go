package bench

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/herald-bot/herald/internal/store/storetest"
)

// A small mixed burst through every way scale sends it: the coordinated
// members share the bot's limits (no global 429, at most one per bucket,
// their leases answered mostly from memory) and finish near one engine
// alone, while members with buckets of their own draw 429s in the same
// run — the run that shows the leases are what keeps them away.
func TestScaleBurstsShareTheLimits(t *testing.T) {
	t.Parallel()
	small := mixedSize{channels: 4, editsPer: 12, members: 4, roles: 6, followups: 6}
	// Two seconds: a bucket changing hands costs tens of milliseconds
	// unscaled (a poll, a query), which a shorter burst magnifies.
	runs, err := RunScaleBursts(t.Context(), storetest.URL(t), []Burst{mixedBurst("mixed", small, globalLimit)}, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || len(runs[0].Runs) != len(scaleRuns) {
		t.Fatalf("runs %+v", runs)
	}
	for _, r := range runs[0].Runs {
		t.Logf("%d members, coordinated %v: %d requests, 429s %v (max %d per bucket), %.2fs (%.2f× alone), %.3f queries/request, %.0f%% from memory",
			r.Members, r.Coordinated, r.Requests, r.RateLimitedByScope, r.Max429PerBucket, r.Seconds, r.RatioToAlone, r.QueriesPerRequest, 100*r.HotPathShare)
		if r.Failed > 0 || r.Unfinished > 0 {
			t.Errorf("%d members: %d calls failed, %d unfinished", r.Members, r.Failed, r.Unfinished)
		}
		if r.Seconds <= 0 || r.RatioToAlone <= 0 {
			t.Errorf("%d members: %.2fs, %.2f× alone: not measured", r.Members, r.Seconds, r.RatioToAlone)
		}
		if !r.Coordinated {
			continue
		}
		if r.RateLimitedByScope["global"] > 0 || r.Max429PerBucket > 1 {
			t.Errorf("%d coordinated members: 429s %v, %d in one bucket; want no global and at most 1 per bucket", r.Members, r.RateLimitedByScope, r.Max429PerBucket)
		}
		if r.Leases.Won == 0 || r.Leases.Memory == 0 || r.HotPathShare <= 0.2 {
			t.Errorf("%d coordinated members: leases %+v, %.0f%% from memory", r.Members, r.Leases, 100*r.HotPathShare)
		}
		// Within half the engine alone's time again (six windows of the
		// member-role bucket, twelve to the burst), on a loaded machine.
		if r.RatioToAlone > 1.5 {
			t.Errorf("%d coordinated members took %.2f× the engine alone", r.Members, r.RatioToAlone)
		}
	}
	if own := runs[0].Runs[len(scaleRuns)-1]; own.RateLimited == 0 {
		t.Errorf("3 members with buckets of their own drew no 429: the burst does not contend, so it shows nothing")
	}
}

// Two herald processes on one token: clicks over the gateway and over
// HTTP are answered by both, every acked click is applied once, and when
// one process is killed its shard is served again and no acked click is
// lost or applied twice.
func TestScaleInteractionsRun(t *testing.T) {
	t.Parallel()
	herald := func() *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"=1")
		return cmd
	}
	res, err := RunScaleInteractions(t.Context(), storetest.URL(t), herald, ScaleOptions{Processes: 2, Shards: 2, Guilds: 2, MembersPerGuild: 40,
		GatewayRate: 40, HTTPRate: 40, KillRate: 20, Burst: time.Second, KillBurst: 3 * time.Second,
		// Two processes' pools within the connections the other tests leave.
		Env: map[string]string{"HERALD_WORKERS_INTERACTIVE": "4", "HERALD_WORKERS_EVENTS": "2", "HERALD_WORKERS_SYNC": "1",
			"HERALD_WORKERS_BACKGROUND": "1", "HERALD_DB_FASTPATH_CONNS": "4"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", res)
	for name, c := range map[string]ScaleClicks{"gateway": res.Gateway, "http": res.HTTP, "kill": res.Kill.ScaleClicks} {
		if c.Interactions == 0 || c.Applied == 0 {
			t.Errorf("%s: %d clicks, %d applied", name, c.Interactions, c.Applied)
		}
		if c.Lost != 0 || c.Doubled != 0 {
			t.Errorf("%s: %d acked clicks lost, %d roles added twice", name, c.Lost, c.Doubled)
		}
		if name != "kill" && c.MissedDeadline != 0 {
			t.Errorf("%s: %d clicks missed Discord's 3 s", name, c.MissedDeadline)
		}
	}
	// The killed process's shard goes dark only until the lease expires
	// (5 s) and the survivor identifies.
	if s := res.Kill.ShardsBackSeconds; s <= 0 || s > 10 {
		t.Errorf("shards served again after %.2fs, want within 10 s", s)
	}
	if h := res.HTTP; h.AnsweredRPS <= 0 || h.AnsweredRPS > h.SentRPS*1.01 {
		t.Errorf("HTTP answered at %.1f/s, sent at %.1f/s: answers cannot come back faster than the clicks went out", h.AnsweredRPS, h.SentRPS)
	}
	// The baseline ran the same burst through the same front.
	if f := res.HTTPFloor; f.Interactions != res.HTTP.Interactions || f.MissedDeadline != 0 || f.AnsweredRPS <= 0 || f.AnsweredRPS > f.SentRPS*1.01 {
		t.Errorf("the HTTP floor: %+v", f)
	}
	if want := res.HTTP.AnsweredRPS / res.HTTPFloor.AnsweredRPS; res.HTTPOverFloor != want {
		t.Errorf("herald over the floor %.3f, want %.3f", res.HTTPOverFloor, want)
	}
	if len(res.AnsweredByProcess) != 2 || res.AnsweredByProcess[0] == 0 || res.AnsweredByProcess[1] == 0 {
		t.Errorf("HTTP answers by process %v: the front should reach both", res.AnsweredByProcess)
	}
}
