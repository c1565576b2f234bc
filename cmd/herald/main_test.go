package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/discord/simtest"
	"github.com/herald-bot/herald/internal/testsupport/logbuf"
	"github.com/herald-bot/herald/internal/testsupport/pgtest"
	"github.com/herald-bot/herald/internal/testsupport/wait"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

type result struct {
	code           int
	stdout, stderr string
}

func herald(t *testing.T, vars map[string]string, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(t.Context(), args, env{stdout: &out, stderr: &errOut, lookup: func(k string) (string, bool) {
		v, ok := vars[k]
		return v, ok
	}})
	return result{code, out.String(), errOut.String()}
}

func TestUsage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no command", nil, 2, "Usage: herald <command>"},
		{"unknown command", []string{"deploy"}, 2, `unknown command "deploy"`},
		{"help", []string{"--help"}, 0, "DISCORD_TOKEN"},
		{"bad flag", []string{"migrate", "--force"}, 2, "flag provided but not defined: -force"},
		{"stray argument", []string{"run", "now"}, 2, `unexpected argument "now"`},
		{"subcommand help", []string{"run", "-h"}, 0, "Usage: herald run"},
		{"version", []string{"version"}, 0, "herald dev (go1."},
		{"sim bad fixture", []string{"sim", "--fixture", "huge"}, 2, "--fixture must be default or none"},
		{"sim bad time scale", []string{"sim", "--time-scale", "0"}, 2, "--time-scale must be above 0"},
		{"demo bad flag", []string{"demo", "--addr"}, 2, "flag needs an argument"},
		{"bench help", []string{"bench", "-h"}, 0, "Usage: herald bench [transport|ack|rolemenu|tickets|proxy|jobs|scale …] [--json]"},
		{"bench unknown benchmark", []string{"bench", "ack", "latency"}, 2, `unknown benchmark "latency"`},
		{"bench named twice", []string{"bench", "ack", "jobs", "ack"}, 2, "ack is named twice"},
		{"bench several take no suite flags", []string{"bench", "ack", "jobs", "--rates", "5"}, 2, "flag provided but not defined: -rates"},
		{"bench one suite help", []string{"bench", "jobs", "-h"}, 0, "Usage: herald bench jobs [flags]"},
		{"bench jobs bad workers", []string{"bench", "jobs", "--workers", "0"}, 2, "--workers must be from 1 to 1000, got 0"},
		{"bench proxy bad accept-for", []string{"bench", "proxy", "--accept-for", "500ms"}, 2, "--accept-for must be from 1s to 10m0s, got 500ms"},
		{"bench proxy hostile short phase", []string{"bench", "proxy", "--hostile", "--phase", "100ms"}, 2, "--phase must be from 1s to 10m0s, got 100ms"},
		{"bench proxy hostile no bodies", []string{"bench", "proxy", "--hostile", "--max-bodies", "0"}, 2, "--max-bodies must be from 1 to 256, got 0"},
		{"bench proxy hostile unknown attack", []string{"bench", "proxy", "--hostile", "--attacks", "tokens,ddos"}, 2, `--attacks takes tokens, bodies and threads, got "ddos"`},
		{"bench transport short target", []string{"bench", "transport", "--target", "10ms"}, 2, "--target must be from 100ms to 10m0s, got 10ms"},
		{"bench tickets one member", []string{"bench", "tickets", "--members", "1"}, 2, "--members must be at least 2"},
		{"demo too many members", []string{"demo", "--members", "5000"}, 2, "members must be from 1 to 1000, got 5000"},
		{"demo more tickets than members", []string{"demo", "--members", "10"}, 2, "tickets must be from 1 to the members (10), got 50"},
		{"demo more closes than tickets", []string{"demo", "--tickets", "5"}, 2, "closes must be from 0 to the tickets (5), got 30"},
		{"demo no notifications", []string{"demo", "--notifications", "0"}, 2, "notifications must be from 1 to 50000"},
		{"demo stray argument", []string{"demo", "now"}, 2, `unexpected argument "now"`},
		{"bench ack bad rates", []string{"bench", "ack", "--rates", "50,fast"}, 2, "--rates takes numbers"},
		{"bench rolemenu bad scale", []string{"bench", "rolemenu", "--scale", "2"}, 2, "--scale must be from 0.005 to 1"},
		{"bench tickets bad members", []string{"bench", "tickets", "--members", "0"}, 2, "--members must be from 1 to 1000"},
		{"bench transport bad burst", []string{"bench", "transport", "--burst", "huge"}, 2, "--burst must be mixed, global, global-binds or all"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := herald(t, nil, tc.args...)
			if r.code != tc.code || !strings.Contains(r.stdout+r.stderr, tc.want) {
				t.Errorf("herald %v = %d\nstdout: %s\nstderr: %s\nwant code %d and %q", tc.args, r.code, r.stdout, r.stderr, tc.code, tc.want)
			}
		})
	}
}

// `herald run` with a bad configuration exits non-zero, lists every problem
// at once and never echoes the token.
func TestRunRejectsBadConfig(t *testing.T) {
	t.Parallel()
	const token = "MTIzNDU2.secret-token-value"
	r := herald(t, map[string]string{
		"DISCORD_TOKEN": token + " trailing", "DISCORD_APP_ID": "abc", "LOG_FORMAT": "yaml",
		"HERALD_WORKERS_SYNC": "-3", "DATABASE_URL": "postgres://u:hunter2@db/h",
	}, "run")
	if r.code != 1 {
		t.Fatalf("exit code = %d, want 1", r.code)
	}
	for _, key := range []string{"DISCORD_TOKEN", "DISCORD_APP_ID", "LOG_FORMAT", "HERALD_WORKERS_SYNC", "4 problems"} {
		if !strings.Contains(r.stderr, key) {
			t.Errorf("stderr does not mention %s:\n%s", key, r.stderr)
		}
	}
	if strings.Contains(r.stderr+r.stdout, "secret-token") {
		t.Errorf("the token was echoed:\n%s", r.stderr)
	}
}

// `herald migrate` twice in a row succeeds; it needs no Discord settings.
func TestMigrateTwice(t *testing.T) {
	t.Parallel()
	vars := map[string]string{"DATABASE_URL": pgtest.URL(t), "LOG_FORMAT": "json"}
	first := herald(t, vars, "migrate")
	if first.code != 0 || !strings.Contains(first.stderr, `"applied migration"`) {
		t.Fatalf("first migrate = %d\n%s", first.code, first.stderr)
	}
	second := herald(t, vars, "migrate")
	if second.code != 0 || strings.Contains(second.stderr, `"applied migration"`) || !strings.Contains(second.stderr, "schema is current") {
		t.Fatalf("second migrate = %d\n%s", second.code, second.stderr)
	}
}

func TestMigrateUnreachableDatabase(t *testing.T) {
	t.Parallel()
	r := herald(t, map[string]string{"DATABASE_URL": "postgres://herald:hunter2@127.0.0.1:1/herald?connect_timeout=1"}, "migrate")
	if r.code != 1 || !strings.Contains(r.stderr, "migration failed") || strings.Contains(r.stderr, "hunter2") {
		t.Fatalf("migrate against a closed port = %d\n%s", r.code, r.stderr)
	}
}

// waitLog waits until the logs contain want.
func waitLog(t *testing.T, logs *logbuf.Buffer, want string) {
	t.Helper()
	wait.Until(t, fmt.Sprintf("%q in the logs", want), func() bool { return strings.Contains(logs.String(), want) })
}

// run serves until its context is cancelled (SIGINT/SIGTERM in main), then
// stops cleanly with exit code 0.
func TestRunStopsOnSignal(t *testing.T) {
	t.Parallel()
	db := pgtest.URL(t)
	s := simtest.New(t)
	ctx, cancel := context.WithCancel(t.Context())
	var logs logbuf.Buffer
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, []string{"run"}, env{stdout: io.Discard, stderr: &logs, lookup: func(k string) (string, bool) {
			v, ok := map[string]string{"DISCORD_TOKEN": "run-secret-token", "DATABASE_URL": db,
				"HERALD_DISCORD_API": s.URL + "/api/v10", "HERALD_AUTO_MIGRATE": "true", "HERALD_HTTP_ADDR": "127.0.0.1:0"}[k]
			return v, ok
		}, environ: func() []string {
			return []string{"PATH=/bin", "HERALD_HTTP_ADDR=127.0.0.1:0", "HERALD_JOB_TIMEOUTS=interactive=secret-ish"}
		}})
	}()
	waitLog(t, &logs, "gateway ready")
	// A misspelt setting is named, its value not; set ones are not named.
	if l := logs.String(); !strings.Contains(l, "var=HERALD_JOB_TIMEOUTS") || strings.Contains(l, "secret-ish") || strings.Contains(l, "var=HERALD_HTTP_ADDR") {
		t.Errorf("the logs must warn of HERALD_JOB_TIMEOUTS alone, without its value:\n%s", l)
	}
	cancel()
	if c := <-code; c != 0 || !strings.Contains(logs.String(), "herald stopped") {
		t.Fatalf("run = %d\n%s", c, logs.String())
	}
	if strings.Contains(logs.String(), "run-secret-token") || !strings.Contains(logs.String(), "discord_token=[redacted]") {
		t.Errorf("logs must show the token redacted:\n%s", logs.String())
	}
}

// A token Discord rejects stops `herald run` once, before any gateway
// identify, with exit status 78 (EX_CONFIG) and the fix in the log; the
// shipped systemd unit does not restart on 78 (RestartPreventExitStatus).
func TestRunRejectedTokenExitsFatal(t *testing.T) {
	t.Parallel()
	s := simtest.New(t, simtest.WithOptions(sim.Options{Token: "the-current-token"}))
	var logs logbuf.Buffer
	c := run(t.Context(), []string{"run"}, env{stdout: io.Discard, stderr: &logs, lookup: func(k string) (string, bool) {
		// No database: Discord's answer comes first.
		v, ok := map[string]string{"DISCORD_TOKEN": "an-old-token", "DATABASE_URL": "postgres://herald@127.0.0.1:1/herald",
			"HERALD_DISCORD_API": s.URL + "/api/v10", "HERALD_HTTP_ADDR": "127.0.0.1:0"}[k]
		return v, ok
	}})
	if c != 78 || !strings.Contains(logs.String(), "Reset Token") || strings.Contains(logs.String(), "an-old-token") {
		t.Fatalf("run with a rejected token = %d\n%s", c, logs.String())
	}
	if n := s.GatewaySessions(); n != 0 {
		t.Fatalf("%d gateway sessions after a rejected token", n)
	}
	// The shipped deployments do not restart it in a loop: systemd stops
	// on 78; Kubernetes and Compose restart any exit, so herald waits.
	for file, want := range map[string]string{"../../deploy/herald.service": "RestartPreventExitStatus=78",
		"../../deploy/k8s/configmap.yaml": "HERALD_ON_FATAL: wait", "../../docker-compose.yml": "HERALD_ON_FATAL: wait"} {
		b, err := os.ReadFile(file)
		if err != nil || !strings.Contains(string(b), want) {
			t.Errorf("%s must say %q: %v", file, want, err)
		}
	}
}

// With HERALD_ON_FATAL=wait (the Kubernetes manifest and Compose, which
// restart any container that exits), a rejected token keeps herald up and
// unready with the reason and the fix on /readyz until it is stopped.
func TestRunRejectedTokenWaits(t *testing.T) {
	t.Parallel()
	s := simtest.New(t, simtest.WithOptions(sim.Options{Token: "the-current-token"}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(t.Context())
	var logs logbuf.Buffer
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, []string{"run"}, env{stdout: io.Discard, stderr: &logs, lookup: func(k string) (string, bool) {
			v, ok := map[string]string{"DISCORD_TOKEN": "an-old-token", "DATABASE_URL": "postgres://herald@127.0.0.1:1/herald", "HERALD_ON_FATAL": "wait",
				"HERALD_DISCORD_API": s.URL + "/api/v10", "HERALD_HTTP_ADDR": addr}[k]
			return v, ok
		}})
	}()
	var body string
	wait.Until(t, "/readyz naming the rejected token", func() bool {
		res, err := http.Get("http://" + addr + "/readyz")
		if err != nil {
			return false
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		body = string(b)
		return res.StatusCode == 503 && strings.Contains(body, "Reset Token")
	})
	if res, err := http.Get("http://" + addr + "/healthz"); err != nil || res.StatusCode != 200 {
		t.Fatalf("healthz while waiting: %v", err)
	}
	cancel()
	if c := <-code; c != 78 || strings.Contains(logs.String()+body, "an-old-token") {
		t.Fatalf("run = %d\n%s", c, logs.String())
	}
}
