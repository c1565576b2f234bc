package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/herald-bot/herald/internal/bench"
)

func cmdBench(ctx context.Context, args []string, e env) int {
	if len(args) == 0 || args[0] != "transport" {
		fmt.Fprintln(e.stderr, "Usage: herald bench transport [flags]\n\nBenchmarks: transport (herald's REST engine against stock discordgo on the simulator).")
		return exitUsage
	}
	fs := newFlagSet("bench transport", "Runs each burst through herald's transport and stock discordgo, each against its own simulator, time-scaled so the theoretical minimum is --target.")
	burst := fs.String("burst", "all", "mixed, global or all")
	target := fs.Duration("target", 10*time.Second, "wall-clock length of each burst's theoretical minimum")
	asJSON := fs.Bool("json", false, `print one JSON object per burst: {"burst", "herald": {...}, "discordgo": {...}}`)
	if ok, code := parseFlags(fs, args[1:], e); !ok {
		return code
	}
	var bursts []bench.Burst
	switch *burst {
	case "mixed":
		bursts = []bench.Burst{bench.MixedBurst()}
	case "global":
		bursts = []bench.Burst{bench.GlobalBurst()}
	case "all":
		bursts = []bench.Burst{bench.MixedBurst(), bench.GlobalBurst()}
	default:
		fmt.Fprintf(e.stderr, "herald bench transport: --burst must be mixed, global or all, got %q\n", *burst)
		return exitUsage
	}
	if *target < 100*time.Millisecond {
		fmt.Fprintf(e.stderr, "herald bench transport: --target must be at least 100ms, got %s\n", *target)
		return exitUsage
	}
	for _, b := range bursts {
		if ctx.Err() != nil {
			return exitFail
		}
		res, err := b.Run(target.Seconds() / b.Min.Seconds())
		if err != nil {
			fmt.Fprintf(e.stderr, "herald bench transport: %v\n", err)
			return exitFail
		}
		if *asJSON {
			json.NewEncoder(e.stdout).Encode(res)
			continue
		}
		printBurst(e.stdout, res)
	}
	return exitOK
}

func printBurst(w io.Writer, r bench.BurstResult) {
	fmt.Fprintf(w, "burst %s: time scale %.4f, theoretical minimum %.2fs (%.0fs unscaled)\n",
		r.Burst, r.TimeScale, r.MinSeconds, r.MinSeconds/r.TimeScale)
	fmt.Fprintf(w, "  %-10s %8s %6s %8s %7s %7s %8s %8s %9s %10s\n",
		"client", "requests", "429s", "global", "user", "shared", "edge", "max/bkt", "invalid", "seconds (×min)")
	for _, c := range []struct {
		name string
		r    bench.ClientResult
	}{{"herald", r.Herald}, {"discordgo", r.Discordgo}} {
		s := c.r.RateLimitedByScope
		fmt.Fprintf(w, "  %-10s %8d %6d %8d %7d %7d %8d %8d %9d %6.2f (%.2f×)",
			c.name, c.r.Requests, c.r.RateLimited, s["global"], s["user"], s["shared"], s["blocked"],
			c.r.Max429PerBucket, c.r.InvalidRequests, c.r.Seconds, c.r.RatioToMin)
		if c.r.Unfinished > 0 {
			fmt.Fprintf(w, "  %d calls unfinished at the deadline", c.r.Unfinished)
		}
		fmt.Fprintln(w)
	}
}
