package main

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// metricName is the shape of herald's metric names.
var metricName = regexp.MustCompile(`^herald_[a-z0-9_]+$`)

// registeredMetrics are the metric names herald's Go source registers:
// string literals of that shape, in a file that uses the Prometheus
// client, given as an Opts' Name or as a call's first argument
// (prometheus.NewDesc, a gauge helper). Read from the source rather than
// from a running herald's /metrics, which leaves out every vector no label
// has been seen for yet (no 429 so far: no herald_discord_rate_limited_total).
func registeredMetrics(t *testing.T) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	fset := token.NewFileSet()
	for _, root := range []string{"../../internal", "../../cmd"} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			if !slices.ContainsFunc(f.Imports, func(s *ast.ImportSpec) bool {
				return s.Path.Value == `"github.com/prometheus/client_golang/prometheus"`
			}) {
				return nil
			}
			add := func(e ast.Expr) {
				if lit, ok := e.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					if s, err := strconv.Unquote(lit.Value); err == nil && metricName.MatchString(s) {
						names[s] = true
					}
				}
			}
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.KeyValueExpr:
					if id, ok := n.Key.(*ast.Ident); ok && id.Name == "Name" {
						add(n.Value)
					}
				case *ast.CallExpr:
					if len(n.Args) > 0 {
						add(n.Args[0])
					}
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(names) < 10 {
		t.Fatalf("found only %v in herald's source", names)
	}
	return names
}

// promQLNames are the metric names a PromQL expression selects: what is
// left of it without strings, label matchers, ranges, numbers and
// durations, grouping clauses, functions and keywords.
func promQLNames(expr string) []string {
	for _, re := range []string{`"(?:[^"\\]|\\.)*"`, `\{[^}]*\}`, `\[[^\]]*\]`, `\b\d[0-9A-Za-z_.]*`,
		`\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`} {
		expr = regexp.MustCompile(re).ReplaceAllString(expr, " ")
	}
	keywords := map[string]bool{"and": true, "or": true, "unless": true, "bool": true, "offset": true,
		"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true, "inf": true, "nan": true}
	var out []string
	for _, m := range regexp.MustCompile(`[A-Za-z_:][A-Za-z0-9_:]*(\s*\()?`).FindAllStringSubmatch(expr, -1) {
		if name := strings.TrimSpace(m[0]); m[1] == "" && !keywords[strings.ToLower(name)] {
			out = append(out, name)
		}
	}
	return out
}

func TestDashboardPromQLNames(t *testing.T) {
	t.Parallel()
	got := promQLNames(`histogram_quantile(0.99, sum by (le, $by) (rate(a_bucket{x=~"$i", y!="}"}[$__rate_interval]))) / on(instance) group_left(pod) b offset 5m`)
	if !slices.Equal(got, []string{"a_bucket", "b"}) {
		t.Fatalf("promQLNames = %v", got)
	}
}

// The Grafana dashboard queries only metrics herald registers (a
// histogram through its _bucket, _sum and _count series), and shows what
// several processes need watched: ack latency, the lanes, 429s, the
// global share, the shards served and the webhook proxy's queues.
func TestDashboardMetrics(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../deploy/grafana/herald.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels     []dashPanel `json:"panels"`
		Templating struct {
			List []struct {
				Name       string `json:"name"`
				Definition string `json:"definition"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatal(err)
	}
	var exprs []string
	var walk func([]dashPanel)
	walk = func(ps []dashPanel) {
		for _, p := range ps {
			if p.Type != "row" && len(p.Targets) == 0 {
				t.Errorf("panel %q queries nothing", p.Title)
			}
			for _, tg := range p.Targets {
				exprs = append(exprs, tg.Expr)
			}
			walk(p.Panels)
		}
	}
	walk(dash.Panels)
	for _, v := range dash.Templating.List {
		if m := regexp.MustCompile(`label_values\(\s*([A-Za-z_:][A-Za-z0-9_:]*)`).FindStringSubmatch(v.Definition); m != nil {
			exprs = append(exprs, m[1])
		}
	}
	registered := registeredMetrics(t)
	used := map[string]bool{}
	for _, e := range exprs {
		names := promQLNames(e)
		if len(names) == 0 {
			t.Errorf("no metric in %q", e)
		}
		for _, n := range names {
			base := n
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				if s, ok := strings.CutSuffix(n, suffix); ok && registered[s] {
					base = s
				}
			}
			if !registered[base] {
				t.Errorf("the dashboard queries %s, which herald does not register (in %q)", n, e)
			}
			used[base] = true
		}
	}
	for _, want := range []string{"herald_ack_latency_seconds", "herald_lane_queue_depth", "herald_discord_rate_limited_total",
		"herald_discord_global_share", "herald_cluster_shards", "herald_webhookproxy_queued"} {
		if !used[want] {
			t.Errorf("the dashboard does not show %s", want)
		}
	}
}

type dashPanel struct {
	Type    string `json:"type"`
	Title   string `json:"title"`
	Targets []struct {
		Expr string `json:"expr"`
	} `json:"targets"`
	Panels []dashPanel `json:"panels"`
}
