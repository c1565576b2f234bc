package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/herald-bot/herald/internal/bench"
)

// hostileFlags declares `herald bench proxy --hostile`'s own flags and
// returns its run; the time scale is the proxy suite's --scale.
func hostileFlags(fs *flag.FlagSet, scale *float64) func(context.Context, env) (bench.ProxyResult, error) {
	phase := fs.Duration("phase", 15*time.Second, "--hostile: how long each phase (quiet, then hostile) posts")
	callers := fs.Int("honest-callers", 8, "--hostile: callers of each of the two honest services")
	rate := fs.Float64("honest-rate", 40, "--hostile: posts per second the honest callers offer together")
	fresh := fs.Int("fresh-webhooks", 100, "--hostile: never-used webhooks the attacker sends bad tokens to, beside the honest ones")
	bodies := fs.Int("max-bodies", 16, "--hostile: the attacker's concurrent bodies of the largest size allowed")
	upload := fs.Int64("max-upload", 10<<20, "--hostile: HERALD_PROXY_MAX_BODY of the herald measured, the files' bytes in each of those bodies")
	attacks := fs.String("attacks", "tokens,bodies,threads", "--hostile: the attacker's kinds of abuse, at once: bad tokens, maximum bodies, random thread ids")
	return func(ctx context.Context, e env) (bench.ProxyResult, error) {
		if err := cmp.Or(within("phase", *phase, time.Second, 10*time.Minute), within("honest-callers", *callers, 1, 256),
			within("honest-rate", *rate, 0.1, 10_000), within("fresh-webhooks", *fresh, 1, 1000), within("max-bodies", *bodies, 1, 256),
			within("max-upload", int(*upload), 2, 100<<20), within("scale", *scale, 0.005, 1)); err != nil {
			return bench.ProxyResult{}, err
		}
		kinds := map[string]int{}
		for _, k := range strings.Split(*attacks, ",") {
			if k != "tokens" && k != "bodies" && k != "threads" {
				return bench.ProxyResult{}, usageError(fmt.Sprintf("--attacks takes tokens, bodies and threads, got %q", k))
			}
			kinds[k] = 1
		}
		self, err := os.Executable()
		if err != nil {
			return bench.ProxyResult{}, err
		}
		dbURL, err := benchDatabase(ctx, e)
		if err != nil {
			return bench.ProxyResult{}, err
		}
		res, err := bench.RunHostile(ctx, dbURL, func() *exec.Cmd { return exec.Command(self, "run") }, bench.HostilePhase(*phase),
			bench.HostileHonest(*callers, *rate, 4), bench.HostileAttack(16*kinds["tokens"], *fresh, *bodies*kinds["bodies"], 16*kinds["threads"]), bench.HostileMaxUpload(*upload),
			bench.HostileTimeScale(*scale))
		return bench.ProxyResult{Hostile: &res}, err
	}
}

func printHostile(w io.Writer, r bench.HostileResult) {
	fmt.Fprintf(w, "webhook proxy under one hostile key, %.0fs in all (herald in its own process, simulator at time scale %g)\n", r.Seconds, r.TimeScale)
	fmt.Fprintf(w, "  honest load: %d services × %d callers, %d webhooks each, %.0f posts/s offered, 1 in 4 with ?wait=true; %.0fs quiet, then %.0fs beside the attacker\n",
		r.Services, r.Callers, r.WebhooksPerService, r.OfferedPerS, r.PhaseSeconds, r.PhaseSeconds)
	q, h := r.Quiet, r.Hostile
	fmt.Fprintf(w, "    %-22s %10s %10s %14s  %s\n", "", "quiet", "hostile", "hostile/quiet", "target")
	row := func(name string, a, b, ratio float64, target string) {
		fmt.Fprintf(w, "    %-22s %10.2f %10.2f %14.2f  %s\n", name, a, b, ratio, target)
	}
	row("accepted/s", q.AcceptedPerS, h.AcceptedPerS, r.AcceptRatio, fmt.Sprintf("≥ %.2f", bench.TargetAcceptRatio))
	row("accepted share", q.AcceptedShare, h.AcceptedShare, ratioOf(h.AcceptedShare, q.AcceptedShare), "")
	row("accept p50 ms", q.AcceptP50MS, h.AcceptP50MS, ratioOf(h.AcceptP50MS, q.AcceptP50MS), "")
	row("accept p99 ms", q.AcceptP99MS, h.AcceptP99MS, r.AcceptP99Ratio, "")
	row("delivered", float64(q.Delivered), float64(h.Delivered), ratioOf(float64(h.Delivered), float64(q.Delivered)), "")
	row("delivery p50 ms", q.DeliveryP50MS, h.DeliveryP50MS, ratioOf(h.DeliveryP50MS, q.DeliveryP50MS), "")
	row("delivery p99 ms", q.DeliveryP99MS, h.DeliveryP99MS, r.DeliveryP99Ratio, "")
	fmt.Fprintf(w, "    refused: quiet %s, hostile %s\n", counts(q.Refused), counts(h.Refused))
	fmt.Fprintf(w, "  attacker (one key): bad tokens on %d known and %d fresh webhooks %s; %d concurrent bodies of %.1f MiB of files %s; random thread ids %s\n",
		r.Services*r.WebhooksPerService, r.FreshWebhooks, counts(r.BadTokens), r.MaxBodies, float64(r.MaxUpload)/(1<<20), counts(r.MaxBodyPosts), counts(r.RandomThreads))
	fmt.Fprintf(w, "  invalid requests from the flood on: herald's budgets %s (target: bot 0); the simulator saw %d, %d on the bot's token\n",
		counts(r.HeraldInvalid), r.SimInvalid, r.SimInvalidBot)
	fmt.Fprintf(w, "  herald's memory, its process alone: RSS peak %.1f MB quiet, %.1f MB hostile, VmHWM %.1f MB (target < %d MB with %d concurrent maximum bodies)\n",
		r.RSSQuietMB, r.RSSHostileMB, r.HWMMB, bench.TargetRSSMB, r.MaxBodies)
	bounded := "bounded"
	if !r.SeriesBounded {
		bounded = "NOT bounded"
	}
	fmt.Fprintf(w, "  /metrics series: %d before, %d at peak, %d after the drain: %s (target: at most %d added)\n",
		r.SeriesBefore, r.SeriesPeak, r.SeriesAfter, bounded, r.SeriesAllowance)
	fmt.Fprintf(w, "  honest deliveries: lost %d, duplicated %d (target 0, 0)\n", r.Lost, r.Duplicates)
}

func ratioOf(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// counts prints answers by status in a stable order, "none" for none.
func counts(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}
