// Command herald is the Discord bot for role menus, support tickets and the
// webhook proxy. Each subcommand is a thin shell over internal/app.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/herald-bot/herald/internal/app"
	"github.com/herald-bot/herald/internal/config"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], env{stdout: os.Stdout, stderr: os.Stderr, lookup: os.LookupEnv, environ: os.Environ})
	stop()
	os.Exit(code)
}

// env is what a subcommand may touch of the outside world, so tests run
// subcommands in-process.
type env struct {
	stdout, stderr io.Writer
	lookup         config.Lookup
	// environ lists the variables set (os.Environ; nil: none to check).
	environ func() []string
}

// Exit codes: 0 success, 1 the command failed, 2 it was called wrongly,
// app.ExitFatal (78) herald cannot run until its configuration changes.
const (
	exitOK    = 0
	exitFail  = 1
	exitUsage = 2
)

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, e env) int
}

func commands() []command {
	return []command{
		{"run", "run the bot: gateway, job workers and the admin HTTP server", cmdRun},
		{"migrate", "create the database if needed and apply River's and herald's migrations", cmdMigrate},
		{"invite", "check the token and print the URL that adds herald to a server, with the permissions and intents it needs", cmdInvite},
		{"register-commands", "bulk-overwrite herald's slash commands (globally, or --guild ID); herald run registers them itself", cmdRegisterCommands},
		{"sim", "run the Discord simulator on its own", cmdSim},
		{"demo", "play a busy server with faults against the simulator and check nothing was lost or duplicated", cmdDemo},
		{"bench", "benchmarks, side by side with what herald replaces: " + strings.Join(suiteNames(), ", "), cmdBench},
		{"version", "print the version", cmdVersion},
	}
}

func run(ctx context.Context, args []string, e env) int {
	if len(args) == 0 {
		usage(e.stderr)
		return exitUsage
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(e.stdout)
		return exitOK
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(ctx, args[1:], e)
		}
	}
	fmt.Fprintf(e.stderr, "herald: unknown command %q\n\n", args[0])
	usage(e.stderr)
	return exitUsage
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "Usage: herald <command> [flags]\n\nCommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-18s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nConfiguration comes from the environment:")
	for _, s := range config.Settings(app.Settings()...) {
		def := s.Default
		if s.Required {
			def = "required"
		}
		fmt.Fprintf(w, "  %-28s %s [%s]\n", s.Key, s.Help, def)
	}
}
