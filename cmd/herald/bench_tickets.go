package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/herald-bot/herald/internal/bench"
)

func ticketsSuite() suite {
	return newSuite("tickets", "tickets opened by double clicks and closed by staff: API calls per ticket, click-to-thread latency and duplicates against the minimum the limits allow",
		"Sets up tickets (thread mode, a log channel) through herald's commands on a simulator with Discord's default limits, time-scaled; members each click the panel's button twice at once, then staff close every ticket but one, which gets --transcript member messages before it is closed. Reports API calls per ticket opened and closed against the least a ticket needs, the long ticket's close-to-transcript-uploaded time against the least the history bucket (5 pages of 100 per 5 s) allows, open-click-to-thread-created latency against the least the panel channel's thread-create bucket (5 per 5 s) allows, and duplicates. Uses a database named after DATABASE_URL's with a _bench suffix.",
		func(fs *flag.FlagSet) func(context.Context, env) (bench.TicketsResult, error) {
			scale := fs.Float64("scale", 0.05, "time scale of the simulator's limits and deadlines (0.05: 5 s windows last 250 ms, the 3 s answer deadline 150 ms)")
			members := fs.Int("members", 100, "members opening a ticket, each clicking twice")
			rate := fs.Int("rate", 50, "members clicking per wall-clock second; staff close at the same pace")
			transcript := fs.Int("transcript", 50_000, "member messages in the one ticket closed last, whose transcript is timed")
			return func(ctx context.Context, e env) (bench.TicketsResult, error) {
				err := cmp.Or(within("scale", *scale, 0.005, 1), within("members", *members, 1, 1000), within("rate", *rate, 1, 1000))
				if err == nil && *members < 2 {
					err = usageError("--members must be at least 2: one ticket is kept for the transcript")
				}
				if err = cmp.Or(err, within("transcript", *transcript, 0, 100_000)); err != nil {
					return bench.TicketsResult{}, err
				}
				dbURL, err := benchDatabase(ctx, e)
				if err != nil {
					return bench.TicketsResult{}, err
				}
				return bench.RunTickets(ctx, dbURL, *scale, *members, *rate, *transcript)
			}
		}, printTickets)
}

func printTickets(w io.Writer, r bench.TicketsResult) {
	fmt.Fprintf(w, "tickets on the simulator at time scale %g (ms below are wall-clock; ÷ %g for Discord's time)\n", r.TimeScale, r.TimeScale)
	fmt.Fprintf(w, "  %d members clicking twice at %d/s: %d of %d clicks acked in time, %d opened, %d closed, %d duplicates, %d answered 429\n",
		r.Members, r.ClickRate, r.Acked, r.Clicks, r.Opened, r.Closed, r.Duplicates, r.RateLimited)
	fmt.Fprintf(w, "  click to thread created %10s %10s\n", "p50 ms", "p99 ms")
	fmt.Fprintf(w, "    herald                %10.0f %10.0f\n", r.OpenP50MS, r.OpenP99MS)
	fmt.Fprintf(w, "    minimum               %10.0f %10.0f\n", r.MinimumP50MS, r.MinimumP99MS)
	fmt.Fprintf(w, "    herald ÷ minimum      %9.3f× %9.3f×\n", r.RatioP50, r.RatioP99)
	fmt.Fprintf(w, "  API calls per ticket opened: %.2f (least %.2f: thread, opener, welcome, staff notification, reply, and an answer to each click seen in time)\n",
		r.CallsPerOpen, r.MinimumPerOpen)
	printRoutes(w, r.OpenCallsByRoute)
	fmt.Fprintf(w, "  API calls per ticket closed: %.2f (least %.0f: answer, closing message, history page, upload, DM channel, DM, notification edit, archive); %d closes run again, refused or unanswered in time\n",
		r.CallsPerClose, r.MinimumPerClose, r.CloseRetries)
	printRoutes(w, r.CloseCallsByRoute)
	fmt.Fprintf(w, "  a ticket of %d messages: transcript uploaded %.0f ms after the close, %d history pages; least %.0f ms (%.3f×)\n",
		r.TranscriptMessages, r.TranscriptMS, r.TranscriptPages, r.TranscriptMinimumMS, r.TranscriptRatio)
}
