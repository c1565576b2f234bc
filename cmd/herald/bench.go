package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/url"
	"os"
	"os/exec"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/herald-bot/herald/internal/app"
	"github.com/herald-bot/herald/internal/config"
	"github.com/herald-bot/herald/internal/logging"
)

// suite is one benchmark of `herald bench`: its name and one-line summary
// (the usage lists them), its flags with the long description `herald
// bench <name> -h` prints, and how its result reads to people.
type suite struct {
	name, summary, help string
	// flags declares the suite's flags on fs and returns its run, which
	// checks them (a usageError for a bad one) before measuring. Unparsed,
	// they are the defaults a run of several suites uses.
	flags func(fs *flag.FlagSet) func(ctx context.Context, e env) (any, error)
	print func(w io.Writer, res any)
	// decode reads the result a run printed with --json.
	decode func(b []byte) (any, error)
}

// newSuite keeps each suite's run and printer typed to its own result.
func newSuite[R any](name, summary, help string, flags func(fs *flag.FlagSet) func(context.Context, env) (R, error), print func(io.Writer, R)) suite {
	return suite{name: name, summary: summary, help: help,
		flags: func(fs *flag.FlagSet) func(context.Context, env) (any, error) {
			run := flags(fs)
			return func(ctx context.Context, e env) (any, error) { return run(ctx, e) }
		},
		print: func(w io.Writer, res any) { print(w, res.(R)) },
		decode: func(b []byte) (any, error) {
			var r R
			err := json.Unmarshal(b, &r)
			return r, err
		}}
}

// suites lists every benchmark in the order `herald bench` runs them.
func suites() []suite {
	return []suite{transportSuite(), ackSuite(), roleMenuSuite(), ticketsSuite(), proxySuite(), jobsSuite(), scaleSuite()}
}

func suiteNames() []string {
	var names []string
	for _, s := range suites() {
		names = append(names, s.name)
	}
	return names
}

// cmdBench runs the suites named first in args, in that order (none:
// every suite); the flags after them are one suite's own, or --json for
// several.
func cmdBench(ctx context.Context, args []string, e env) int {
	chosen, args, err := pickSuites(suites(), args)
	if err != nil {
		fmt.Fprintf(e.stderr, "herald bench: %v\n\n", err)
		benchUsage(e.stderr)
		return exitUsage
	}
	if len(chosen) == 1 {
		return benchOne(ctx, chosen[0], args, e)
	}
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.Usage = func() { benchUsage(fs.Output()) }
	asJSON := fs.Bool("json", false, "")
	if ok, code := parseFlags(fs, args, e); !ok {
		return code
	}
	return benchMany(ctx, chosen, *asJSON, e, inChild)
}

// inChild runs a suite on its defaults in a process of its own, so what
// one suite measures (the proxy's RSS above all) never includes the heap,
// goroutines and connections an earlier one left behind.
func inChild(ctx context.Context, s suite, e env) (any, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, exe, "bench", s.name, "--json")
	cmd.Stdout, cmd.Stderr = &out, e.stderr
	if err := cmd.Run(); err != nil {
		return nil, err // the child said why on stderr
	}
	return s.decode(out.Bytes())
}

// pickSuites takes the suite names args starts with, in order, and
// returns those suites (none named: all) and the args after the names.
func pickSuites(all []suite, args []string) (chosen []suite, rest []string, err error) {
	for len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		i := slices.IndexFunc(all, func(s suite) bool { return s.name == args[0] })
		switch {
		case i < 0:
			return nil, nil, fmt.Errorf("unknown benchmark %q", args[0])
		case slices.ContainsFunc(chosen, func(s suite) bool { return s.name == args[0] }):
			return nil, nil, fmt.Errorf("%s is named twice", args[0])
		}
		chosen, args = append(chosen, all[i]), args[1:]
	}
	if len(chosen) == 0 {
		chosen = all
	}
	return chosen, args, nil
}

func benchUsage(w io.Writer) {
	fmt.Fprintf(w, "Usage: herald bench [%s …] [--json]\n\n", strings.Join(suiteNames(), "|"))
	fmt.Fprintln(w, "Runs the named benchmarks in order, each on its defaults (none named: every one), measuring herald side by side with what it replaces in one run. One benchmark named takes its own flags: herald bench <name> -h. Benchmarks that need Postgres use a database named after DATABASE_URL's with a _bench suffix.\n\nBenchmarks:")
	for _, s := range suites() {
		fmt.Fprintf(w, "  %-10s %s\n", s.name, s.summary)
	}
	fmt.Fprintln(w, "\nFlags:\n  --json  print one JSON object keyed by benchmark: its wall time and result (or error)")
}

// benchOne runs one suite with its own flags and prints its result.
func benchOne(ctx context.Context, s suite, args []string, e env) int {
	fs := newFlagSet("bench "+s.name, s.help)
	run := s.flags(fs)
	asJSON := fs.Bool("json", false, "print the result as one JSON object")
	profile := fs.String("cpuprofile", "", "write a CPU profile of this process over the run to `file` (go tool pprof reads it): the simulator, the load and, but for scale's `herald run` children, herald itself")
	if ok, code := parseFlags(fs, args, e); !ok {
		return code
	}
	if *profile != "" {
		stop, err := startCPUProfile(*profile)
		if err != nil {
			fmt.Fprintf(e.stderr, "herald bench %s: %v\n", s.name, err)
			return exitFail
		}
		defer func() {
			if err := stop(); err != nil {
				fmt.Fprintf(e.stderr, "herald bench %s: %v\n", s.name, err)
			}
		}()
	}
	res, err := run(ctx, e)
	if err != nil {
		fmt.Fprintf(e.stderr, "herald bench %s: %v\n", s.name, err)
		if errors.As(err, new(usageError)) {
			return exitUsage
		}
		return exitFail
	}
	if *asJSON {
		json.NewEncoder(e.stdout).Encode(res)
	} else {
		s.print(e.stdout, res)
	}
	return exitOK
}

// startCPUProfile profiles this process into path until stop is called.
func startCPUProfile(path string) (stop func() error, err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	return func() error {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		return nil
	}, nil
}

// suiteRun is one suite's part of `herald bench --json`.
type suiteRun struct {
	WallSeconds float64 `json:"wall_seconds"`
	Result      any     `json:"result,omitempty"`
	Error       string  `json:"error,omitempty"`
}

// benchMany runs suites on their defaults, one after another; a suite
// that fails is reported and the others still run.
func benchMany(ctx context.Context, chosen []suite, asJSON bool, e env, run func(context.Context, suite, env) (any, error)) int {
	runs := map[string]suiteRun{}
	code := exitOK
	for _, s := range chosen {
		if ctx.Err() != nil {
			code = exitFail
			break // stopped: report what ran
		}
		if !asJSON {
			fmt.Fprintf(e.stdout, "== %s: %s\n", s.name, s.summary)
		}
		start := time.Now()
		res, err := run(ctx, s, e)
		r := suiteRun{WallSeconds: time.Since(start).Seconds(), Result: res}
		if err != nil {
			r.Result, r.Error, code = nil, err.Error(), exitFail
		}
		runs[s.name] = r
		if asJSON {
			continue
		}
		if err != nil {
			fmt.Fprintf(e.stderr, "herald bench %s: failed after %.1fs: %v\n\n", s.name, r.WallSeconds, err)
			continue
		}
		s.print(e.stdout, res)
		fmt.Fprintf(e.stdout, "(%s took %.1fs)\n\n", s.name, r.WallSeconds)
	}
	if asJSON {
		json.NewEncoder(e.stdout).Encode(runs)
	}
	return code
}

// usageError is a flag value a suite refuses: the command was called
// wrongly (exit 2), nothing ran.
type usageError string

func (u usageError) Error() string { return string(u) }

// within refuses v unless lo ≤ v ≤ hi; cmp.Or of several reports the
// first refused.
func within[T int | float64 | time.Duration](name string, v, lo, hi T) error {
	if v < lo || v > hi {
		return usageError(fmt.Sprintf("--%s must be from %v to %v, got %v", name, lo, hi, v))
	}
	return nil
}

// benchDatabase migrates and returns the benchmarks' database: the one
// DATABASE_URL names, with a _bench suffix, so a benchmark never touches
// herald's own data.
func benchDatabase(ctx context.Context, e env) (string, error) {
	cfg, err := config.LoadForMigrate(e.lookup)
	if err != nil {
		return "", err
	}
	u, err := url.Parse(cfg.DatabaseURL.Reveal())
	if err != nil {
		return "", errors.New("bad DATABASE_URL")
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + "_bench"
	cfg.DatabaseURL = config.DatabaseURL(u.String())
	log := logging.New(e.stderr, cfg.LogFormat, cfg.LogLevel)
	if err := app.Migrate(ctx, cfg, logging.AtLeast(log, slog.LevelWarn)); err != nil {
		return "", fmt.Errorf("bench database: %w", err)
	}
	return cfg.DatabaseURL.Reveal(), nil
}

func printRoutes(w io.Writer, byRoute map[string]int) {
	for _, route := range slices.Sorted(maps.Keys(byRoute)) {
		fmt.Fprintf(w, "    %6d  %s\n", byRoute[route], route)
	}
}
