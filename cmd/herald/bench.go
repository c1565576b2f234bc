package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/herald-bot/herald/internal/app"
	"github.com/herald-bot/herald/internal/bench"
	"github.com/herald-bot/herald/internal/config"
	"github.com/herald-bot/herald/internal/logging"
)

func cmdBench(ctx context.Context, args []string, e env) int {
	switch {
	case len(args) > 0 && args[0] == "transport":
		return benchTransport(ctx, args[1:], e)
	case len(args) > 0 && args[0] == "ack":
		return benchAck(ctx, args[1:], e)
	case len(args) > 0 && args[0] == "rolemenu":
		return benchRoleMenu(ctx, args[1:], e)
	case len(args) > 0 && args[0] == "tickets":
		return benchTickets(ctx, args[1:], e)
	case len(args) > 0 && args[0] == "proxy":
		return benchProxy(ctx, args[1:], e)
	}
	fmt.Fprintln(e.stderr, "Usage: herald bench transport|ack|rolemenu|tickets|proxy [flags]\n\n"+
		"  transport  herald's REST engine against stock discordgo on the simulator\n"+
		"  ack        interaction ack latency: herald's fast path against a naive handler\n"+
		"  rolemenu   role-menu clicks and edits: API calls and click-to-role latency against the minimum the limits allow\n"+
		"  tickets    tickets opened by double clicks and closed by staff: API calls per ticket, click-to-thread latency and duplicates against the minimum the limits allow\n"+
		"  proxy      webhook proxy: durable accepts per second and p99, RSS with 100,000 queued, delivery rate against the webhook limit, loss and duplicates")
	return exitUsage
}

func benchTransport(ctx context.Context, args []string, e env) int {
	fs := newFlagSet("bench transport", "Runs each burst through herald's transport and stock discordgo, each against its own simulator, time-scaled so the theoretical minimum is --target.")
	burst := fs.String("burst", "all", "mixed, global, global-binds or all")
	target := fs.Duration("target", 10*time.Second, "wall-clock length of each burst's theoretical minimum")
	asJSON := fs.Bool("json", false, `print one JSON object per burst: {"burst", "herald": {...}, "discordgo": {...}}`)
	if ok, code := parseFlags(fs, args, e); !ok {
		return code
	}
	var bursts []bench.Burst
	for _, b := range bench.Bursts() {
		if *burst == "all" || *burst == b.Name {
			bursts = append(bursts, b)
		}
	}
	if len(bursts) == 0 {
		fmt.Fprintf(e.stderr, "herald bench transport: --burst must be mixed, global, global-binds or all, got %q\n", *burst)
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

func benchAck(ctx context.Context, args []string, e env) int {
	fs := newFlagSet("bench ack", "Clicks a role-menu button at each rate against herald's fast path, the floor (the same herald answering without touching Postgres) and a naive handler that changes the role before answering, each on its own simulator, and reports the ack latency the simulator measured. Uses a database named after DATABASE_URL's with a _bench suffix.")
	ratesFlag := fs.String("rates", "50,200,500,1000,2000", "interactions per second, comma-separated")
	duration := fs.Duration("duration", 5*time.Second, "how long each rate runs")
	asJSON := fs.Bool("json", false, `print {"rates": [{"rps", "herald": {"p50_ms", "p95_ms", "p99_ms", "missed_deadline", "busy", "interactions", "sent_rps"}, "floor": {...}, "naive": {...}, "herald_over_floor_p99"}]}`)
	if ok, code := parseFlags(fs, args, e); !ok {
		return code
	}
	var rates []int
	for _, f := range strings.Split(*ratesFlag, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 5000 {
			fmt.Fprintf(e.stderr, "herald bench ack: --rates takes numbers from 1 to 5000, got %q\n", f)
			return exitUsage
		}
		rates = append(rates, n)
	}
	if *duration < time.Second {
		fmt.Fprintf(e.stderr, "herald bench ack: --duration must be at least 1s, got %s\n", *duration)
		return exitUsage
	}
	dbURL, ok := benchDatabase(ctx, e)
	if !ok {
		return exitFail
	}
	res, err := bench.RunAck(ctx, dbURL, rates, *duration)
	if err != nil {
		fmt.Fprintf(e.stderr, "herald bench ack: %v\n", err)
		return exitFail
	}
	if *asJSON {
		json.NewEncoder(e.stdout).Encode(res)
		return exitOK
	}
	fmt.Fprintf(e.stdout, "ack latency as the simulator measured it (ms), %s per rate; busy = answered \"try again\" with nothing enqueued\n", *duration)
	fmt.Fprintf(e.stdout, "  %6s %8s  %-7s %8s %8s %8s %11s %11s %12s\n", "rps", "sent/s", "handler", "p50", "p95", "p99", "missed", "busy", "p99 ÷ floor")
	for _, r := range res.Rates {
		for _, h := range []struct {
			name string
			l    bench.Latency
		}{{"herald", r.Herald}, {"floor", r.Floor}, {"naive", r.Naive}} {
			ratio := ""
			if h.name == "herald" && r.HeraldOverFloorP99 > 0 {
				ratio = fmt.Sprintf("%.2f×", r.HeraldOverFloorP99)
			}
			fmt.Fprintf(e.stdout, "  %6d %8.0f  %-7s %8.2f %8.2f %8.2f %5d/%-5d %5d/%-5d %12s\n", r.RPS, h.l.SentRPS, h.name,
				h.l.P50MS, h.l.P95MS, h.l.P99MS, h.l.MissedDeadline, h.l.Interactions, h.l.Busy, h.l.Interactions, ratio)
		}
	}
	return exitOK
}

// benchDatabase migrates and returns the benchmarks' database: the one
// DATABASE_URL names, with a _bench suffix, so a benchmark never touches
// herald's own data.
func benchDatabase(ctx context.Context, e env) (string, bool) {
	cfg, log, ok := loadConfig(e, config.LoadForMigrate)
	if !ok {
		return "", false
	}
	u, err := url.Parse(cfg.DatabaseURL.Reveal())
	if err != nil {
		log.Error("bad DATABASE_URL")
		return "", false
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + "_bench"
	cfg.DatabaseURL = config.DatabaseURL(u.String())
	if err := app.Migrate(ctx, cfg, logging.AtLeast(log, slog.LevelWarn)); err != nil {
		log.Error("bench database", "err", err)
		return "", false
	}
	return cfg.DatabaseURL.Reveal(), true
}

func benchRoleMenu(ctx context.Context, args []string, e env) int {
	fs := newFlagSet("bench rolemenu", "Sets up a role menu through herald's commands on a simulator with Discord's default limits, time-scaled, edits it quickly, then has members click both of its options at once; reports API calls per click and per config change, and click-to-role-applied latency against the least the member-role bucket (10 per 10 s per guild) allows. Uses a database named after DATABASE_URL's with a _bench suffix.")
	scale := fs.Float64("scale", 0.05, "time scale of the simulator's limits and deadlines (0.05: 10 s windows last 500 ms)")
	members := fs.Int("members", 500, "members clicking, each both options")
	changes := fs.Int("changes", 10, "quick config changes to the published menu")
	rate := fs.Int("rate", 250, "clicks sent per wall-clock second")
	asJSON := fs.Bool("json", false, "print the result as one JSON object")
	if ok, code := parseFlags(fs, args, e); !ok {
		return code
	}
	switch {
	case *scale < 0.005 || *scale > 1:
		fmt.Fprintf(e.stderr, "herald bench rolemenu: --scale must be from 0.005 to 1, got %g\n", *scale)
		return exitUsage
	case *members < 1 || *members > 5000:
		fmt.Fprintf(e.stderr, "herald bench rolemenu: --members must be from 1 to 5000, got %d\n", *members)
		return exitUsage
	case *changes < 1 || *changes > 100:
		fmt.Fprintf(e.stderr, "herald bench rolemenu: --changes must be from 1 to 100, got %d\n", *changes)
		return exitUsage
	case *rate < 1 || *rate > 5000:
		fmt.Fprintf(e.stderr, "herald bench rolemenu: --rate must be from 1 to 5000, got %d\n", *rate)
		return exitUsage
	}
	dbURL, ok := benchDatabase(ctx, e)
	if !ok {
		return exitFail
	}
	res, err := bench.RunRoleMenu(ctx, dbURL, *scale, *members, *changes, *rate)
	if err != nil {
		fmt.Fprintf(e.stderr, "herald bench rolemenu: %v\n", err)
		return exitFail
	}
	if *asJSON {
		json.NewEncoder(e.stdout).Encode(res)
		return exitOK
	}
	printRoleMenu(e.stdout, res)
	return exitOK
}

func printRoleMenu(w io.Writer, r bench.RoleMenuResult) {
	fmt.Fprintf(w, "role menus on the simulator at time scale %g (ms below are wall-clock; ÷ %g for Discord's time)\n", r.TimeScale, r.TimeScale)
	fmt.Fprintf(w, "  %d clicks by %d members at %d/s: %d acked in time, %d roles applied, %d replies expired, %d answered 429\n",
		r.Clicks, r.Members, r.ClickRate, r.Acked, r.Applied, r.RepliesExpired, r.RateLimited)
	fmt.Fprintf(w, "  click to role applied   %10s %10s\n", "p50 ms", "p99 ms")
	fmt.Fprintf(w, "    herald                %10.0f %10.0f\n", r.AppliedP50MS, r.AppliedP99MS)
	fmt.Fprintf(w, "    minimum               %10.0f %10.0f\n", r.MinimumP50MS, r.MinimumP99MS)
	fmt.Fprintf(w, "    herald ÷ minimum      %9.3f× %9.3f×\n", r.RatioP50, r.RatioP99)
	fmt.Fprintf(w, "  API calls per click: %.2f (least 3: answer, role change, reply)\n", r.CallsPerClick)
	printRoutes(w, r.ClickCallsByRoute)
	fmt.Fprintf(w, "  %d quick config changes: %.2f API calls each (least %.2f, a bot editing on every change %.0f), %d message edits\n",
		r.ConfigChanges, r.CallsPerConfigChange, r.MinimumPerConfigChange, r.NaivePerConfigChange, r.MessageEdits)
	printRoutes(w, r.ConfigCallsByRoute)
}

func benchTickets(ctx context.Context, args []string, e env) int {
	fs := newFlagSet("bench tickets", "Sets up tickets (thread mode, a log channel) through herald's commands on a simulator with Discord's default limits, time-scaled; members each click the panel's button twice at once, then staff close every ticket but one, which gets --transcript member messages before it is closed. Reports API calls per ticket opened and closed against the least a ticket needs, the long ticket's close-to-transcript-uploaded time against the least the history bucket (5 pages of 100 per 5 s) allows, open-click-to-thread-created latency against the least the panel channel's thread-create bucket (5 per 5 s) allows, and duplicates. Uses a database named after DATABASE_URL's with a _bench suffix.")
	scale := fs.Float64("scale", 0.25, "time scale of the simulator's limits and deadlines (0.25: 5 s windows last 1.25 s, the 3 s answer deadline 750 ms)")
	members := fs.Int("members", 100, "members opening a ticket, each clicking twice")
	rate := fs.Int("rate", 50, "members clicking per wall-clock second; staff close at the same pace")
	transcript := fs.Int("transcript", 5000, "member messages in the one ticket closed last, whose transcript is timed")
	asJSON := fs.Bool("json", false, "print the result as one JSON object")
	if ok, code := parseFlags(fs, args, e); !ok {
		return code
	}
	switch {
	case *scale < 0.005 || *scale > 1:
		fmt.Fprintf(e.stderr, "herald bench tickets: --scale must be from 0.005 to 1, got %g\n", *scale)
		return exitUsage
	case *members < 1 || *members > 1000:
		fmt.Fprintf(e.stderr, "herald bench tickets: --members must be from 1 to 1000, got %d\n", *members)
		return exitUsage
	case *rate < 1 || *rate > 1000:
		fmt.Fprintf(e.stderr, "herald bench tickets: --rate must be from 1 to 1000, got %d\n", *rate)
		return exitUsage
	case *members < 2:
		fmt.Fprintln(e.stderr, "herald bench tickets: --members must be at least 2: one ticket is kept for the transcript")
		return exitUsage
	case *transcript < 0 || *transcript > 100_000:
		fmt.Fprintf(e.stderr, "herald bench tickets: --transcript must be from 0 to 100000, got %d\n", *transcript)
		return exitUsage
	}
	dbURL, ok := benchDatabase(ctx, e)
	if !ok {
		return exitFail
	}
	res, err := bench.RunTickets(ctx, dbURL, *scale, *members, *rate, *transcript)
	if err != nil {
		fmt.Fprintf(e.stderr, "herald bench tickets: %v\n", err)
		return exitFail
	}
	if *asJSON {
		json.NewEncoder(e.stdout).Encode(res)
		return exitOK
	}
	printTickets(e.stdout, res)
	return exitOK
}

func printTickets(w io.Writer, r bench.TicketsResult) {
	fmt.Fprintf(w, "tickets on the simulator at time scale %g (ms below are wall-clock; ÷ %g for Discord's time)\n", r.TimeScale, r.TimeScale)
	fmt.Fprintf(w, "  %d members clicking twice at %d/s: %d of %d clicks acked in time, %d opened, %d closed, %d duplicates, %d answered 429\n",
		r.Members, r.ClickRate, r.Acked, r.Clicks, r.Opened, r.Closed, r.Duplicates, r.RateLimited)
	fmt.Fprintf(w, "  click to thread created %10s %10s\n", "p50 ms", "p99 ms")
	fmt.Fprintf(w, "    herald                %10.0f %10.0f\n", r.OpenP50MS, r.OpenP99MS)
	fmt.Fprintf(w, "    minimum               %10.0f %10.0f\n", r.MinimumP50MS, r.MinimumP99MS)
	fmt.Fprintf(w, "    herald ÷ minimum      %9.3f× %9.3f×\n", r.RatioP50, r.RatioP99)
	fmt.Fprintf(w, "  API calls per ticket opened: %.2f (least %.0f: two answers, thread, opener, welcome, staff notification, reply)\n",
		r.CallsPerOpen, r.MinimumPerOpen)
	printRoutes(w, r.OpenCallsByRoute)
	fmt.Fprintf(w, "  API calls per ticket closed: %.2f (least %.0f: answer, closing message, history page, upload, DM channel, DM, notification edit, archive)\n",
		r.CallsPerClose, r.MinimumPerClose)
	printRoutes(w, r.CloseCallsByRoute)
	fmt.Fprintf(w, "  a ticket of %d messages: transcript uploaded %.0f ms after the close, %d history pages; least %.0f ms (%.3f×)\n",
		r.TranscriptMessages, r.TranscriptMS, r.TranscriptPages, r.TranscriptMinimumMS, r.TranscriptRatio)
}

func printRoutes(w io.Writer, byRoute map[string]int) {
	for _, route := range slices.Sorted(maps.Keys(byRoute)) {
		fmt.Fprintf(w, "    %6d  %s\n", byRoute[route], route)
	}
}
