package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"

	"github.com/herald-bot/herald/internal/bench"
)

func scaleSuite() suite {
	return newSuite("scale", "several herald processes on one token: shared limits, shards, HTTP interactions, a kill -9",
		"Sends the transport bursts through 1, 2 and 3 cluster members sharing the bot's limits through Postgres, beside one engine alone and 3 members with buckets of their own; "+
			"then runs --processes `herald run` processes on one simulator and measures role-menu clicks over the gateway and over HTTP through a round-robin front "+
			"(beside the same HTTP burst answered by stock discordgo handlers that keep nothing, the floor), "+
			"and a burst during which one process is killed with SIGKILL.",
		func(fs *flag.FlagSet) func(context.Context, env) (bench.ScaleResult, error) {
			burst := fs.String("burst", "all", "transport bursts: mixed, global, global-binds, all or none")
			target := fs.Duration("target", 10*time.Second, "wall-clock length of each transport burst's theoretical minimum")
			clicks := fs.Bool("clicks", true, "after the transport bursts, the clicks on herald run processes")
			processes := fs.Int("processes", 3, "herald run processes for the clicks")
			shards := fs.Int("shards", 3, "gateway shards (HERALD_SHARD_COUNT)")
			guilds := fs.Int("guilds", 6, "guilds with a role menu, as many on each shard (rounded up to a multiple of --shards)")
			members := fs.Int("members", 700, "members per guild; each clicks each burst's button at most once")
			gatewayRate := fs.Int("gateway-rate", 500, "clicks a second over the gateway")
			httpRate := fs.Int("http-rate", 2000, "clicks a second over HTTP")
			killRate := fs.Int("kill-rate", 200, "clicks a second during the kill")
			burstFor := fs.Duration("for", 2*time.Second, "length of the gateway and HTTP bursts")
			killFor := fs.Duration("kill-for", 10*time.Second, "length of the kill burst; the kill comes halfway")
			return func(ctx context.Context, e env) (bench.ScaleResult, error) {
				var res bench.ScaleResult
				bursts := bench.BurstsNamed(*burst)
				if len(bursts) == 0 && *burst != "none" {
					return res, usageError(fmt.Sprintf("--burst must be mixed, global, global-binds, all or none, got %q", *burst))
				}
				if err := cmp.Or(within("target", *target, 100*time.Millisecond, 10*time.Minute), within("processes", *processes, 2, 8),
					within("shards", *shards, 1, 64), within("guilds", *guilds, 1, 100), within("members", *members, 10, 5000),
					within("gateway-rate", *gatewayRate, 1, 10_000), within("http-rate", *httpRate, 1, 10_000), within("kill-rate", *killRate, 1, 10_000),
					within("for", *burstFor, 100*time.Millisecond, time.Minute), within("kill-for", *killFor, time.Second, 5*time.Minute)); err != nil {
					return res, err
				}
				dbURL, err := benchDatabase(ctx, e)
				if err != nil {
					return res, err
				}
				if res.Bursts, err = bench.RunScaleBursts(ctx, dbURL, bursts, *target); err != nil {
					return res, err
				}
				if !*clicks {
					return res, nil
				}
				self, err := os.Executable()
				if err != nil {
					return res, err
				}
				in, err := bench.RunScaleInteractions(ctx, dbURL, func() *exec.Cmd { return exec.Command(self, "run") }, bench.ScaleOptions{
					Processes: *processes, Shards: *shards, Guilds: *guilds, MembersPerGuild: *members,
					GatewayRate: *gatewayRate, HTTPRate: *httpRate, KillRate: *killRate, Burst: *burstFor, KillBurst: *killFor})
				res.Interactions = &in
				return res, err
			}
		}, printScale)
}

func printScale(w io.Writer, res bench.ScaleResult) {
	for _, b := range res.Bursts {
		fmt.Fprintf(w, "burst %s: time scale %.4f, theoretical minimum %.2fs\n", b.Burst, b.TimeScale, b.MinSeconds)
		fmt.Fprintf(w, "  %-18s %8s %6s %7s %6s %8s %8s %14s %9s %9s %8s\n",
			"members", "requests", "429s", "global", "user", "max/bkt", "invalid", "seconds (×min)", "×alone", "queries/req", "memory")
		for _, r := range b.Runs {
			name := fmt.Sprintf("%d coordinated", r.Members)
			if !r.Coordinated {
				name = fmt.Sprintf("%d own buckets", r.Members)
				if r.Members == 1 {
					name = "1 engine alone"
				}
			}
			s := r.RateLimitedByScope
			fmt.Fprintf(w, "  %-18s %8d %6d %7d %6d %8d %8d %7.2f (%.2f×) %8.2f× %9.3f %7.1f%%",
				name, r.Requests, r.RateLimited, s["global"], s["user"], r.Max429PerBucket, r.InvalidRequests, r.Seconds, r.RatioToMin,
				r.RatioToAlone, r.QueriesPerRequest, 100*r.HotPathShare)
			if r.Unfinished > 0 {
				fmt.Fprintf(w, "  %d unfinished at the deadline (≥)", r.Unfinished)
			}
			fmt.Fprintln(w)
		}
	}
	in := res.Interactions
	if in == nil {
		return
	}
	fmt.Fprintf(w, "%d herald run processes, %d shards, %d guilds: role-menu clicks (ack ms as the simulator measured; misses count as 3,000 ms)\n",
		in.Processes, in.Shards, in.Guilds)
	fmt.Fprintf(w, "  %-8s %6s %8s %8s %8s %8s %8s %6s %8s %6s %8s\n", "ingress", "rate", "sent/s", "p50", "p99", "missed", "busy", "acked", "applied", "lost", "doubled")
	for _, c := range []struct {
		name string
		c    bench.ScaleClicks
	}{{"gateway", in.Gateway}, {"http", in.HTTP}, {"kill -9", in.Kill.ScaleClicks}} {
		fmt.Fprintf(w, "  %-8s %6d %8.0f %8.2f %8.2f %8d %8d %6d %8d %6d %8d\n", c.name, c.c.Rate, c.c.SentRPS, c.c.P50MS, c.c.P99MS,
			c.c.MissedDeadline, c.c.Busy, c.c.Interactions-c.c.MissedDeadline, c.c.Applied, c.c.Lost, c.c.Doubled)
	}
	fmt.Fprintf(w, "  HTTP: %.0f/s sent, answered within 3 s at %.0f/s (first click to last answer); answers by process %v\n", in.HTTP.SentRPS, in.HTTP.AnsweredRPS, in.AnsweredByProcess)
	f := in.HTTPFloor
	fmt.Fprintf(w, "  HTTP floor (stock discordgo handlers, nothing kept, same front): %.0f/s sent, answered at %.0f/s, p99 %.2f ms, %d missed; herald %.3f× the floor\n",
		f.SentRPS, f.AnsweredRPS, f.P99MS, f.MissedDeadline, in.HTTPOverFloor)
	fmt.Fprintf(w, "  click jobs by process %v, drained %.1fs after the last burst\n", in.JobsByProcess, in.DrainSeconds)
	fmt.Fprintf(w, "  kill -9 of one process mid-burst: every shard served again after %.2fs\n", in.Kill.ShardsBackSeconds)
}
