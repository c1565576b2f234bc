package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/herald-bot/herald/internal/config"
	"github.com/herald-bot/herald/internal/demo"
	"github.com/herald-bot/herald/internal/logging"
)

// demoFlags are `herald demo`'s settings: output, and the scenario's
// sizes for smaller or larger runs.
type demoFlags struct {
	json, keep bool
	addr       string
	sc         demo.Scenario
}

func (f *demoFlags) register(fs *flag.FlagSet) {
	f.sc = demo.Default()
	fs.BoolVar(&f.json, "json", false, "print only the summary, as one JSON object, on stdout (the live view goes to stderr)")
	fs.BoolVar(&f.keep, "keep", false, "leave the simulator and herald running after the scenario, and print how to drive them")
	fs.StringVar(&f.addr, "addr", "127.0.0.1:0", "listen address of the simulator")
	fs.IntVar(&f.sc.Members, "members", f.sc.Members, "members clicking role menus (1 to 1000)")
	fs.IntVar(&f.sc.Tickets, "tickets", f.sc.Tickets, "members opening a ticket (at most --members)")
	fs.IntVar(&f.sc.Closes, "closes", f.sc.Closes, "tickets staff close with a transcript (at most --tickets)")
	fs.IntVar(&f.sc.Notifications, "notifications", f.sc.Notifications, "webhook notifications through the proxy (1 to 50000)")
	fs.Uint64Var(&f.sc.Seed, "seed", f.sc.Seed, "picks the members' clicks")
}

func cmdDemo(ctx context.Context, args []string, e env) int {
	fs := newFlagSet("demo", "Plays a busy afternoon on a Discord server against the embedded simulator: an admin editing five role menus in quick succession while 200 members click them, 50 members open tickets (double clicks) and 30 are closed with transcripts, and 25 monitoring services push 5,000 notifications through the webhook proxy — with a 20-second window of Discord 5xx errors, a 429 storm and a kill -9 of herald in the middle. Postgres is found as the tests find it (DATABASE_URL, 127.0.0.1:5432, or a throwaway cluster) and a database of the run's own is created on it. Prints a live view, then a summary checked against the simulator's final state; the exit status is 1 if anything was lost or done twice.")
	var f demoFlags
	f.register(fs)
	if ok, code := parseFlags(fs, args, e); !ok {
		return code
	}
	// Fewer notifications than services: one service each.
	f.sc.Services = min(f.sc.Services, max(f.sc.Notifications, 1))
	if err := f.sc.Validate(); err != nil {
		fmt.Fprintf(e.stderr, "herald demo: %v\n", err)
		fs.Usage()
		return exitUsage
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(e.stderr, "herald demo: cannot find herald's own binary to run it: %v\n", err)
		return exitFail
	}
	// herald's own log goes to a file: the terminal shows the story.
	logPath := filepath.Join(os.TempDir(), fmt.Sprintf("herald-demo-%d.log", os.Getpid()))
	heraldLog, err := os.Create(logPath)
	if err != nil {
		fmt.Fprintf(e.stderr, "herald demo: %v\n", err)
		return exitFail
	}
	defer heraldLog.Close()

	view := e.stdout
	if f.json {
		view = e.stderr
	}
	live := newLiveView(view, logging.IsTerminal(view))
	fmt.Fprintf(view, "herald demo: starting the Discord simulator, Postgres and herald (its log: %s)\n", logPath)
	t0 := time.Now()
	d, err := demo.Start(ctx, f.sc, demo.Options{
		// herald runs as a child process, so the demo can kill -9 it.
		Herald:        func() *exec.Cmd { return exec.Command(self, "run") },
		HeraldLog:     heraldLog,
		Progress:      live.show,
		ProgressEvery: live.every,
		SimAddr:       f.addr,
	})
	if err != nil {
		fmt.Fprintf(e.stderr, "herald demo: %v\n", err)
		return exitFail
	}
	defer d.Close()
	fmt.Fprintf(view, "herald demo: set up in %.1f s; playing the scenario\n", time.Since(t0).Seconds())
	sum, err := d.Play(ctx)
	live.done()
	if err != nil {
		fmt.Fprintf(e.stderr, "herald demo: %v\n", err)
		return exitFail
	}
	if f.json {
		b, _ := json.Marshal(sum)
		fmt.Fprintln(e.stdout, string(b))
	} else {
		printSummary(e.stdout, sum)
	}
	fmt.Fprintf(view, "herald demo: finished in %.1f s\n", time.Since(t0).Seconds())
	if f.keep {
		printGuide(view, d.Guide(), logPath)
		<-ctx.Done()
	}
	if sum.Lost > 0 || sum.Duplicates > 0 || !sum.Drained {
		return exitFail
	}
	return exitOK
}

// printGuide tells how to drive the kept simulator and herald.
func printGuide(w io.Writer, g demo.Guide, logPath string) {
	req := func(r any) string { b, _ := json.Marshal(r); return string(b) }
	fmt.Fprintf(w, `
The simulator and herald keep running until Ctrl-C.

  simulator        %[1]s   (REST under /api/v10, control API under /_sim/)
  herald admin     %[2]s/metrics, %[2]s/debug/transport
  River UI         %[2]s/riverui/
  webhook proxy    %[3]s
  database         %[4]s
  herald's log     %[5]s

Click a role menu as a member (the answer shows in the interaction):
  curl -s -X POST %[1]s/_sim/interactions -d '%[6]s'
  curl -s %[1]s/_sim/interactions/ID

Open a ticket as the same member:
  curl -s -X POST %[1]s/_sim/interactions -d '%[7]s'

Post a notification through the proxy, then read the guild:
  curl -s -H 'Content-Type: application/json' -d '{"content":"deploy finished"}' %[8]s
  curl -s %[1]s/_sim/guilds/%[9]s
`, g.SimURL, g.AdminURL, g.ProxyURL, config.DatabaseURL(g.DatabaseURL), logPath, req(g.Click), req(g.Open), g.Webhook, g.GuildID)
}
