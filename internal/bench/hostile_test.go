package bench

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/herald-bot/herald/internal/store/storetest"
)

// childEnv makes the test binary run as `herald run`.
const childEnv = "HERALD_BENCH_CHILD"

// A small run of both phases against herald as a child process: the
// honest callers' accepted posts are each delivered once, the attacker's
// random thread ids and tokens add no /metrics series beyond the fixed
// allowance, and every figure the report prints was measured.
func TestHostileRun(t *testing.T) {
	t.Parallel()
	herald := func() *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"=1")
		return cmd
	}
	// Discord's own limits (time scale 1): the honest load stays well
	// within them, while the attacker's thread ids pile up as pending
	// targets, as they would on a real server.
	res, err := RunHostile(t.Context(), storetest.URL(t), herald, HostilePhase(3*time.Second), HostileHonest(2, 4, 2),
		HostileAttack(4, 20, 1, 48), HostileMaxUpload(1<<20), HostileTimeScale(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", res)
	if res.Quiet.Accepted == 0 || res.Hostile.Accepted == 0 || res.Quiet.AcceptP99MS <= 0 || res.Quiet.DeliveryP99MS <= 0 {
		t.Errorf("quiet %+v, hostile %+v: want accepted and delivered posts with latencies in both", res.Quiet, res.Hostile)
	}
	if res.Lost != 0 || res.Duplicates != 0 {
		t.Errorf("honest deliveries: lost %d, duplicated %d", res.Lost, res.Duplicates)
	}
	if total(res.BadTokens) == 0 || total(res.MaxBodyPosts) == 0 {
		t.Errorf("the attacker sent bad tokens %v, maximum bodies %v", res.BadTokens, res.MaxBodyPosts)
	}
	// Enough distinct thread ids that a series per target would show.
	if n := total(res.RandomThreads); n <= 2*SeriesAllowance {
		t.Errorf("only %d random thread ids sent (%v): too few to test the series bound", n, res.RandomThreads)
	}
	if !res.SeriesBounded {
		t.Errorf("/metrics series: %d before, %d at peak, %d after: more than %d added", res.SeriesBefore, res.SeriesPeak, res.SeriesAfter, SeriesAllowance)
	}
	if res.HeraldInvalid["bot"] != 0 || res.SimInvalidBot != 0 {
		t.Errorf("the bot's own invalid requests: herald counted %v, the simulator %d; want 0", res.HeraldInvalid, res.SimInvalidBot)
	}
	if res.RSSQuietMB <= 0 || res.RSSHostileMB <= 0 || res.HWMMB < res.RSSHostileMB {
		t.Errorf("RSS quiet %.1f MB, hostile %.1f MB, VmHWM %.1f MB", res.RSSQuietMB, res.RSSHostileMB, res.HWMMB)
	}
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
