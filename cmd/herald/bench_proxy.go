package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/herald-bot/herald/internal/bench"
)

func proxySuite() suite {
	return newSuite("proxy", "webhook proxy: durable accepts per second and p99, RSS with 100,000 queued, delivery rate against the webhook limit, loss and duplicates",
		"Measures the webhook proxy in three phases, each on its own simulator with herald serving HERALD_PROXY_ADDR: callers post to many webhooks at once for --warmup, then for --accept-for (durable 204s per second and their latency); callers post until --queued deliveries are pending while Discord's own limits hold deliveries back, then this process's resident memory is read (herald, the simulator and the callers together); senders post --notifications to one webhook on a time-scaled simulator, and every one is checked delivered exactly once, in order, against the least time the webhook's limits (5 per 2 s, 30 a minute per channel) allow. With --hostile, one run of another kind: herald runs as a child process (`herald run` of this binary) behind the proxy with keys for two honest services and one attacker; the honest callers post small messages at --honest-rate for --phase alone, then for --phase again while the attacker floods distinct bad tokens on the honest and --fresh-webhooks never-used webhooks, posts --max-bodies concurrent bodies whose files fill --max-upload, and posts to random thread ids. It prints side by side the honest accept rate and latency, deliveries and their latency, the invalid requests herald and the simulator counted, herald's own RSS peak (/proc), the /metrics series before and after, and lost and duplicated honest deliveries, each beside the issue's target. Uses a database named after DATABASE_URL's with a _bench suffix.",
		func(fs *flag.FlagSet) func(context.Context, env) (bench.ProxyResult, error) {
			acceptFor := fs.Duration("accept-for", 10*time.Second, "how long the acceptance phase posts")
			warmup := fs.Duration("warmup", 2*time.Second, "how long the acceptance phase posts before it counts")
			clients := fs.Int("clients", 64, "concurrent callers of the acceptance and memory phases")
			webhooks := fs.Int("webhooks", 64, "webhooks they post to, 4 per channel")
			queued := fs.Int("queued", 100_000, "pending deliveries the memory phase reaches before reading RSS")
			notifications := fs.Int("notifications", 600, "notifications of the delivery phase, to one webhook")
			senders := fs.Int("senders", 8, "concurrent senders of the delivery phase, each numbering its own")
			scale := fs.Float64("scale", 0.02, "time scale of the delivery phase's simulator, and --hostile's (0.02: 30 a minute is 25 a second)")
			hostile := fs.Bool("hostile", false, "instead of the three phases: the same honest load alone, then beside one key's abuse (see above)")
			runHostile := hostileFlags(fs, scale)
			return func(ctx context.Context, e env) (bench.ProxyResult, error) {
				if *hostile {
					return runHostile(ctx, e)
				}
				if err := cmp.Or(within("accept-for", *acceptFor, time.Second, 10*time.Minute), within("warmup", *warmup, 0, time.Minute),
					within("clients", *clients, 1, 1024), within("webhooks", *webhooks, 1, 1000), within("queued", *queued, 1, 1_000_000),
					within("notifications", *notifications, 1, 100_000), within("senders", *senders, 1, 256),
					within("scale", *scale, 0.005, 1)); err != nil {
					return bench.ProxyResult{}, err
				}
				dbURL, err := benchDatabase(ctx, e)
				if err != nil {
					return bench.ProxyResult{}, err
				}
				return bench.RunProxy(ctx, dbURL, bench.ProxyAcceptFor(*acceptFor), bench.ProxyWarmup(*warmup),
					bench.ProxyClients(*clients), bench.ProxyWebhooks(*webhooks),
					bench.ProxyQueued(*queued), bench.ProxyNotifications(*notifications, *senders), bench.ProxyTimeScale(*scale))
			}
		}, printProxy)
}

func printProxy(w io.Writer, r bench.ProxyResult) {
	if r.Hostile != nil {
		printHostile(w, *r.Hostile)
		return
	}
	fmt.Fprintf(w, "webhook proxy, %.0fs in all\n", r.Seconds)
	fmt.Fprintf(w, "  acceptance: %d callers, %d webhooks (their tokens verified in %.0fs), %.0fs after %.0fs of warm-up: %d accepted durably, %.0f/s, p50 %.2f ms, p99 %.2f ms",
		r.Clients, r.Webhooks, r.VerifySeconds, r.AcceptSeconds, r.WarmupSeconds, r.Accepted, r.AcceptedPerS, r.AcceptP50MS, r.AcceptP99MS)
	if len(r.Refused) > 0 {
		fmt.Fprintf(w, ", refused %v", r.Refused)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  bare River's batch insert (200 jobs a commit, one writer, same body): %.0f/s; herald ÷ bare %.3f\n", r.BareBatchPerS, r.AcceptedToBare)
	fmt.Fprintf(w, "  memory: %d queued in %.1fs (%.0f/s): RSS %.1f MB, %.1f MB after GC (this process: herald, simulator and callers)\n",
		r.Queued, r.QueueSeconds, r.QueueAcceptedPerS, r.RSSMB100kQueued, r.RSSMBAfterGC)
	fmt.Fprintf(w, "  delivery to one webhook at time scale %g: %d of %d delivered in %.2fs, %.2f/s against a limit of %.2f/s; least time %.2fs, ratio %.3f\n",
		r.TimeScale, r.Delivered, r.Notifications, r.DeliverySeconds, r.DeliveredPerS, r.LimitPerS, r.MinimumSeconds, r.DeliveryRatioToLimit)
	fmt.Fprintf(w, "  lost %d, duplicated %d, out of order %d, simulator 429s %v\n", r.Lost, r.Duplicates, r.OutOfOrder, r.RateLimited)
}
