package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/herald-bot/herald/internal/bench"
)

func transportSuite() suite {
	return newSuite("transport", "herald's REST engine against stock discordgo on the simulator",
		"Runs each burst through herald's transport and stock discordgo, each against its own simulator, time-scaled so the theoretical minimum is --target.",
		func(fs *flag.FlagSet) func(context.Context, env) (bench.TransportResult, error) {
			burst := fs.String("burst", "all", "mixed, global, global-binds or all")
			target := fs.Duration("target", 10*time.Second, "wall-clock length of each burst's theoretical minimum")
			return func(ctx context.Context, _ env) (bench.TransportResult, error) {
				var res bench.TransportResult
				bursts := bench.BurstsNamed(*burst)
				if len(bursts) == 0 {
					return res, usageError(fmt.Sprintf("--burst must be mixed, global, global-binds or all, got %q", *burst))
				}
				if err := within("target", *target, 100*time.Millisecond, 10*time.Minute); err != nil {
					return res, err
				}
				for _, b := range bursts {
					if err := ctx.Err(); err != nil {
						return res, err
					}
					r, err := b.Run(target.Seconds() / b.Min.Seconds())
					if err != nil {
						return res, err
					}
					res.Bursts = append(res.Bursts, r)
				}
				return res, nil
			}
		}, printTransport)
}

func printTransport(w io.Writer, res bench.TransportResult) {
	for _, r := range res.Bursts {
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
}
