package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/herald-bot/herald/internal/bench"
)

func roleMenuSuite() suite {
	return newSuite("rolemenu", "role-menu clicks and edits: API calls and click-to-role latency against the minimum the limits allow",
		"Sets up a role menu through herald's commands on a simulator with Discord's default limits, time-scaled, edits it quickly, then has members click both of its options at once; reports API calls per click and per config change, and click-to-role-applied latency against the least the member-role bucket (10 per 10 s per guild) allows. Uses a database named after DATABASE_URL's with a _bench suffix.",
		func(fs *flag.FlagSet) func(context.Context, env) (bench.RoleMenuResult, error) {
			scale := fs.Float64("scale", 0.05, "time scale of the simulator's limits and deadlines (0.05: 10 s windows last 500 ms)")
			members := fs.Int("members", 500, "members clicking, each both options")
			changes := fs.Int("changes", 10, "quick config changes to the published menu")
			rate := fs.Int("rate", 250, "clicks sent per wall-clock second")
			return func(ctx context.Context, e env) (bench.RoleMenuResult, error) {
				if err := cmp.Or(within("scale", *scale, 0.005, 1), within("members", *members, 1, 5000),
					within("changes", *changes, 1, 100), within("rate", *rate, 1, 5000)); err != nil {
					return bench.RoleMenuResult{}, err
				}
				dbURL, err := benchDatabase(ctx, e)
				if err != nil {
					return bench.RoleMenuResult{}, err
				}
				return bench.RunRoleMenu(ctx, dbURL, *scale, *members, *changes, *rate)
			}
		}, printRoleMenu)
}

func printRoleMenu(w io.Writer, r bench.RoleMenuResult) {
	fmt.Fprintf(w, "role menus on the simulator at time scale %g (ms below are wall-clock; ÷ %g for Discord's time)\n", r.TimeScale, r.TimeScale)
	fmt.Fprintf(w, "  %d clicks by %d members at %d/s: %d acked in time, %d roles applied, %d answered 429\n",
		r.Clicks, r.Members, r.ClickRate, r.Acked, r.Applied, r.RateLimited)
	fmt.Fprintf(w, "  changes past the token's life: %d members told when to expect theirs, %d never told\n", r.RepliesNoticed, r.RepliesLost)
	fmt.Fprintf(w, "  click to role applied   %10s %10s\n", "p50 ms", "p99 ms")
	fmt.Fprintf(w, "    herald                %10.0f %10.0f\n", r.AppliedP50MS, r.AppliedP99MS)
	fmt.Fprintf(w, "    minimum               %10.0f %10.0f\n", r.MinimumP50MS, r.MinimumP99MS)
	fmt.Fprintf(w, "    herald ÷ minimum      %9.3f× %9.3f×\n", r.RatioP50, r.RatioP99)
	fmt.Fprintf(w, "  API calls per click: %.2f (least 3: answer, role change, reply); role changes repeated or refused: %d\n", r.CallsPerClick, r.ExtraRoleCalls)
	printRoutes(w, r.ClickCallsByRoute)
	fmt.Fprintf(w, "  %d quick config changes in %.0f ms (%d run again): %.2f API calls each (least %.2f, a bot editing on every change %.0f), %d message edits\n",
		r.ConfigChanges, r.ConfigSpanMS, r.ConfigRetries, r.CallsPerConfigChange, r.MinimumPerConfigChange, r.NaivePerConfigChange, r.MessageEdits)
	printRoutes(w, r.ConfigCallsByRoute)
}
