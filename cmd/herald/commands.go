package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"runtime"
	"strings"

	"github.com/herald-bot/herald/internal/app"
	"github.com/herald-bot/herald/internal/config"
	"github.com/herald-bot/herald/internal/logging"
)

// parseFlags parses a subcommand's flags; a wrong flag or a stray argument
// prints the subcommand's usage and means exit code 2.
func parseFlags(fs *flag.FlagSet, args []string, e env) (ok bool, code int) {
	fs.SetOutput(e.stderr)
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return false, exitOK
		}
		return false, exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(e.stderr, "herald %s: unexpected argument %q\n", fs.Name(), fs.Arg(0))
		fs.Usage()
		return false, exitUsage
	}
	return true, exitOK
}

func newFlagSet(name, summary string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: herald %s [flags]\n\n%s\n", name, summary)
		fs.PrintDefaults()
	}
	return fs
}

// loadConfig loads the configuration or prints every problem at once.
func loadConfig(e env, load func(config.Lookup) (config.Config, error)) (config.Config, *slog.Logger, bool) {
	cfg, err := load(e.lookup)
	if err != nil {
		fmt.Fprintf(e.stderr, "herald: %v\n", err)
		return cfg, nil, false
	}
	return cfg, logging.New(e.stderr, cfg.LogFormat, cfg.LogLevel), true
}

// warnUnread names each HERALD_ variable `herald run` does not read: a
// misspelt setting would otherwise leave its default in force without a
// word. Its value is never logged.
func warnUnread(log *slog.Logger, e env) {
	if e.environ == nil {
		return
	}
	var names []string
	for _, kv := range e.environ() {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, "HERALD_") {
			names = append(names, name)
		}
	}
	for _, name := range config.Unread(names, app.Settings()...) {
		log.Warn("herald reads no such variable; it is ignored (herald --help lists the settings)", "var", name)
	}
}

func cmdRun(ctx context.Context, args []string, e env) int {
	fs := newFlagSet("run", "Runs the bot until SIGINT or SIGTERM, then shuts down gracefully.")
	if ok, code := parseFlags(fs, args, e); !ok {
		return code
	}
	cfg, log, ok := loadConfig(e, func(l config.Lookup) (config.Config, error) { return app.LoadConfig(l) })
	if !ok {
		return exitFail
	}
	warnUnread(log, e)
	a, err := app.New(ctx, cfg, log)
	if err == nil {
		err = a.Run(ctx)
	}
	var fatal *app.FatalError
	switch {
	case err == nil:
		log.Info("herald stopped")
		return exitOK
	case errors.As(err, &fatal) && cfg.HoldOnFatal:
		failed(log, "herald cannot run", err)
		if err := app.Hold(ctx, cfg, log, fatal); err != nil {
			log.Error("herald could not wait", "err", err)
		}
		return app.ExitFatal
	}
	return failed(log, "herald cannot run", err)
}

// failed logs why herald stopped and picks the exit status: ExitFatal for
// what a restart cannot mend, so service managers stop restarting.
func failed(log *slog.Logger, msg string, err error) int {
	var fatal *app.FatalError
	if errors.As(err, &fatal) {
		log.Error(msg+"; restarting will not help", "reason", fatal.Err, "fix", fatal.Fix, "exit_status", app.ExitFatal)
		return app.ExitFatal
	}
	log.Error(msg, "err", err)
	return exitFail
}

func cmdMigrate(ctx context.Context, args []string, e env) int {
	fs := newFlagSet("migrate", "Creates the database if it is missing and applies every pending migration. Safe to run repeatedly and concurrently.")
	if ok, code := parseFlags(fs, args, e); !ok {
		return code
	}
	cfg, log, ok := loadConfig(e, config.LoadForMigrate)
	if !ok {
		return exitFail
	}
	if err := app.Migrate(ctx, cfg, log); err != nil {
		log.Error("migration failed", "err", err)
		return exitFail
	}
	return exitOK
}

func cmdVersion(_ context.Context, args []string, e env) int {
	fs := newFlagSet("version", "Prints the version.")
	if ok, code := parseFlags(fs, args, e); !ok {
		return code
	}
	fmt.Fprintf(e.stdout, "herald %s (%s %s/%s)\n", app.Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return exitOK
}
