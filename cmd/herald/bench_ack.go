package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/herald-bot/herald/internal/bench"
)

func ackSuite() suite {
	return newSuite("ack", "interaction ack latency: herald's fast path against the floor and a naive handler",
		"Clicks a role-menu button at each rate against herald's fast path, the floor (the same herald answering without touching Postgres) and a naive handler that changes the role before answering, each on its own simulator, and reports the ack latency the simulator measured. Uses a database named after DATABASE_URL's with a _bench suffix.",
		func(fs *flag.FlagSet) func(context.Context, env) (bench.AckResult, error) {
			ratesFlag := fs.String("rates", "50,200,500,1000,2000", "interactions per second, comma-separated")
			duration := fs.Duration("duration", 5*time.Second, "how long each rate runs")
			return func(ctx context.Context, e env) (bench.AckResult, error) {
				var rates []int
				for _, f := range strings.Split(*ratesFlag, ",") {
					n, err := strconv.Atoi(strings.TrimSpace(f))
					if err != nil || n < 1 || n > 5000 {
						return bench.AckResult{}, usageError(fmt.Sprintf("--rates takes numbers from 1 to 5000, got %q", f))
					}
					rates = append(rates, n)
				}
				if err := within("duration", *duration, time.Second, 10*time.Minute); err != nil {
					return bench.AckResult{}, err
				}
				dbURL, err := benchDatabase(ctx, e)
				if err != nil {
					return bench.AckResult{}, err
				}
				return bench.RunAck(ctx, dbURL, rates, *duration)
			}
		}, printAck)
}

func printAck(w io.Writer, res bench.AckResult) {
	fmt.Fprintf(w, "ack latency as the simulator measured it (ms), %gs per rate; busy = answered \"try again\" with nothing enqueued\n", res.Seconds)
	fmt.Fprintf(w, "  %6s %8s  %-7s %8s %8s %8s %11s %11s %12s\n", "rps", "sent/s", "handler", "p50", "p95", "p99", "missed", "busy", "p99 ÷ floor")
	for _, r := range res.Rates {
		for _, h := range []struct {
			name string
			l    bench.Latency
		}{{"herald", r.Herald}, {"floor", r.Floor}, {"naive", r.Naive}} {
			ratio := ""
			if h.name == "herald" && r.HeraldOverFloorP99 > 0 {
				ratio = fmt.Sprintf("%.2f×", r.HeraldOverFloorP99)
			}
			fmt.Fprintf(w, "  %6d %8.0f  %-7s %8.2f %8.2f %8.2f %5d/%-5d %5d/%-5d %12s\n", r.RPS, h.l.SentRPS, h.name,
				h.l.P50MS, h.l.P95MS, h.l.P99MS, h.l.MissedDeadline, h.l.Interactions, h.l.Busy, h.l.Interactions, ratio)
		}
	}
}
