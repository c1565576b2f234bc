package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/herald-bot/herald/internal/bench"
)

func names(ss []suite) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.name)
	}
	return out
}

// Named suites run in the order named; none named, all in the table's
// order; the flags after the names are left for the suite.
func TestPickSuites(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args      []string
		want      []string
		wantRest  []string
		wantError string
	}{
		{nil, suiteNames(), nil, ""},
		{[]string{"--json"}, suiteNames(), []string{"--json"}, ""},
		{[]string{"jobs", "ack", "--json"}, []string{"jobs", "ack"}, []string{"--json"}, ""},
		{[]string{"transport", "--burst", "mixed"}, []string{"transport"}, []string{"--burst", "mixed"}, ""},
		{[]string{"ack", "acks"}, nil, nil, `unknown benchmark "acks"`},
		{[]string{"jobs", "jobs"}, nil, nil, "jobs is named twice"},
	}
	for _, tc := range tests {
		chosen, rest, err := pickSuites(suites(), tc.args)
		if tc.wantError != "" {
			if err == nil || err.Error() != tc.wantError || chosen != nil {
				t.Errorf("pickSuites(%q) = %v, %v; want error %q", tc.args, names(chosen), err, tc.wantError)
			}
			continue
		}
		if err != nil || !slices.Equal(names(chosen), tc.want) || !slices.Equal(rest, tc.wantRest) {
			t.Errorf("pickSuites(%q) = %v, %q, %v; want %v, %q", tc.args, names(chosen), rest, err, tc.want, tc.wantRest)
		}
	}
	if want := []string{"transport", "ack", "rolemenu", "tickets", "proxy", "jobs", "scale"}; !slices.Equal(suiteNames(), want) {
		t.Errorf("suites = %v, want %v", suiteNames(), want)
	}
}

// fakeResult is what the fake suites measure.
type fakeResult struct {
	Size int `json:"size"`
}

// fakeSuite measures its --size flag, or fails with err.
// inProcess runs a suite on its defaults in the test's process, where
// benchMany's own runs each in a child herald.
func inProcess(ctx context.Context, s suite, e env) (any, error) {
	return s.flags(flag.NewFlagSet(s.name, flag.ContinueOnError))(ctx, e)
}

// A child's --json output reads back as the suite's own result.
func TestSuiteDecode(t *testing.T) {
	t.Parallel()
	s := fakeSuite("first", nil)
	res, err := s.decode([]byte(`{"size":7}`))
	if err != nil || res.(fakeResult).Size != 7 {
		t.Fatalf("decode = %+v, %v", res, err)
	}
	if _, err := s.decode([]byte(`not json`)); err == nil {
		t.Error("bad output decoded without an error")
	}
}

func fakeSuite(name string, err error) suite {
	return newSuite(name, name+" in one line", name+" at length",
		func(fs *flag.FlagSet) func(context.Context, env) (fakeResult, error) {
			size := fs.Int("size", 3, "how big")
			return func(context.Context, env) (fakeResult, error) {
				if *size < 1 {
					return fakeResult{}, usageError(fmt.Sprintf("--size must be positive, got %d", *size))
				}
				return fakeResult{Size: *size}, err
			}
		}, func(w io.Writer, r fakeResult) { fmt.Fprintf(w, "%s measured %d\n", name, r.Size) })
}

func benchEnv() (env, *bytes.Buffer, *bytes.Buffer) {
	var out, errOut bytes.Buffer
	return env{stdout: &out, stderr: &errOut, lookup: func(string) (string, bool) { return "", false }}, &out, &errOut
}

// One suite takes its own flags; a value it refuses is a usage error.
func TestBenchOne(t *testing.T) {
	t.Parallel()
	e, out, _ := benchEnv()
	if code := benchOne(t.Context(), fakeSuite("fake", nil), []string{"--size", "7", "--json"}, e); code != exitOK || out.String() != "{\"size\":7}\n" {
		t.Errorf("--json = %d, %q", code, out)
	}
	e, out, _ = benchEnv()
	if code := benchOne(t.Context(), fakeSuite("fake", nil), nil, e); code != exitOK || out.String() != "fake measured 3\n" {
		t.Errorf("defaults = %d, %q", code, out)
	}
	e, out, errOut := benchEnv()
	if code := benchOne(t.Context(), fakeSuite("fake", nil), []string{"--size", "0"}, e); code != exitUsage ||
		errOut.String() != "herald bench fake: --size must be positive, got 0\n" || out.Len() != 0 {
		t.Errorf("bad size = %d, %q, %q", code, out, errOut)
	}
	e, _, errOut = benchEnv()
	if code := benchOne(t.Context(), fakeSuite("fake", errors.New("no database")), nil, e); code != exitFail ||
		!strings.Contains(errOut.String(), "herald bench fake: no database") {
		t.Errorf("failing suite = %d, %q", code, errOut)
	}
}

// --cpuprofile writes a profile pprof reads (gzip) around the run; a file
// it cannot create fails the command before the suite runs.
func TestBenchOneCPUProfile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpu.prof")
	e, out, errOut := benchEnv()
	if code := benchOne(t.Context(), fakeSuite("fake", nil), []string{"--cpuprofile", path}, e); code != exitOK || out.String() != "fake measured 3\n" {
		t.Fatalf("--cpuprofile = %d, %q, %q", code, out, errOut)
	}
	b, err := os.ReadFile(path)
	if err != nil || len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		t.Errorf("profile = %d bytes starting %x, %v; want gzip", len(b), b[:min(len(b), 2)], err)
	}
	e, out, errOut = benchEnv()
	bad := filepath.Join(t.TempDir(), "missing", "cpu.prof")
	if code := benchOne(t.Context(), fakeSuite("fake", nil), []string{"--cpuprofile", bad}, e); code != exitFail || out.Len() != 0 ||
		!strings.Contains(errOut.String(), "herald bench fake: --cpuprofile: open "+bad) {
		t.Errorf("unwritable profile = %d, %q, %q", code, out, errOut)
	}
}

// Several suites run on their defaults, one after another, into one JSON
// object keyed by suite with each one's wall time; one that fails is
// reported and the others still run, and the command fails.
func TestBenchMany(t *testing.T) {
	t.Parallel()
	chosen := []suite{fakeSuite("first", nil), fakeSuite("broken", errors.New("simulator gone")), fakeSuite("last", nil)}
	e, out, _ := benchEnv()
	if code := benchMany(t.Context(), chosen, true, e, inProcess); code != exitFail {
		t.Errorf("exit code = %d, want %d", code, exitFail)
	}
	var got map[string]struct {
		WallSeconds *float64    `json:"wall_seconds"`
		Result      *fakeResult `json:"result"`
		Error       string      `json:"error"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil || strings.Count(out.String(), "\n") != 1 {
		t.Fatalf("output is not one JSON object: %v\n%s", err, out)
	}
	if len(got) != 3 {
		t.Errorf("suites in the output: %s", out)
	}
	for _, name := range []string{"first", "last"} {
		r := got[name]
		if r.WallSeconds == nil || *r.WallSeconds < 0 || r.Result == nil || r.Result.Size != 3 || r.Error != "" {
			t.Errorf("%s = %+v, want its default result and a wall time", name, r)
		}
	}
	if b := got["broken"]; b.Error != "simulator gone" || b.Result != nil || b.WallSeconds == nil {
		t.Errorf("broken = %+v, want its error and wall time", b)
	}

	e, out, _ = benchEnv()
	if code := benchMany(t.Context(), chosen[:1], false, e, inProcess); code != exitOK ||
		!strings.HasPrefix(out.String(), "== first: first in one line\nfirst measured 3\n(first took ") {
		t.Errorf("human output = %d\n%s", code, out)
	}
}

// The proxy suite prints --hostile's result instead of its phases, each
// figure beside the target, and says when the series grew past
// their allowance.
func TestPrintHostile(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	printProxy(&out, bench.ProxyResult{Hostile: &bench.HostileResult{Services: 2, Callers: 8, WebhooksPerService: 4, MaxBodies: 16, MaxUpload: 10 << 20,
		Quiet: bench.Honest{AcceptedPerS: 40}, Hostile: bench.Honest{AcceptedPerS: 36}, AcceptRatio: 0.9,
		HeraldInvalid: map[string]int{"bot": 0, "webhooks": 12}, RSSHostileMB: 250, SeriesBefore: 200, SeriesPeak: 9000, SeriesAllowance: 100}})
	for _, want := range []string{"accepted/s                  40.00      36.00           0.90  ≥ 0.90",
		"herald's budgets {bot 0, webhooks 12} (target: bot 0)", "250.0 MB hostile", "(target < 300 MB with 16 concurrent maximum bodies)",
		"200 before, 9000 at peak", "NOT bounded (target: at most 100 added)", "lost 0, duplicated 0"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("missing %q in\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "acceptance:") {
		t.Errorf("the three phases printed beside --hostile:\n%s", out.String())
	}
}
