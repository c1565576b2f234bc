package app

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/discord/simtest"
	"github.com/herald-bot/herald/internal/store/storetest"
	"github.com/herald-bot/herald/internal/testsupport/wait"
)

// runWith starts herald on a simulator of the test's own with extra
// settings and returns its admin address once it is ready.
func runWith(t *testing.T, extra map[string]string) string {
	t.Helper()
	s := simtest.New(t)
	s.CreateGuild(sim.DefaultFixture())
	env := map[string]string{"DISCORD_TOKEN": simtest.Token, "DATABASE_URL": storetest.URL(t),
		"HERALD_DISCORD_API": s.URL + "/api/v10", "HERALD_HTTP_ADDR": "127.0.0.1:0", "HERALD_SHUTDOWN_TIMEOUT": "2s"}
	for k, v := range extra {
		env[k] = v
	}
	cfg, err := LoadConfig(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	a, err := New(ctx, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	wait.Until(t, "readyz 200", func() bool { code, _ := readyz(t, a.AdminAddr()); return code == 200 })
	return a.AdminAddr()
}

func get(t *testing.T, url, user, password string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if user != "" {
		req.SetBasicAuth(user, password)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// River's UI (its page and its API, reading herald's own jobs) and the
// transport's state answer with the configured credentials only.
func TestOperatorToolsNeedCredentials(t *testing.T) {
	t.Parallel()
	addr := runWith(t, map[string]string{"HERALD_ADMIN_USER": "ops", "HERALD_ADMIN_PASSWORD": "correct-horse-battery"})
	for _, path := range []string{"/riverui/", "/riverui/api/jobs?state=completed", "/debug/transport", "/debug/cluster"} {
		if code, _ := get(t, "http://"+addr+path, "", ""); code != http.StatusUnauthorized {
			t.Errorf("%s without credentials: %d, want 401", path, code)
		}
		if code, _ := get(t, "http://"+addr+path, "ops", "wrong-horse-battery"); code != http.StatusUnauthorized {
			t.Errorf("%s with a wrong password: %d, want 401", path, code)
		}
	}
	if code, body := get(t, "http://"+addr+"/riverui/", "ops", "correct-horse-battery"); code != http.StatusOK || !strings.Contains(body, "<html") {
		t.Errorf("River UI: %d %.200s", code, body)
	}
	code, body := get(t, "http://"+addr+"/riverui/api/jobs?state=completed", "ops", "correct-horse-battery")
	var jobs struct{ Data []struct{ Kind string } }
	if code != http.StatusOK || json.Unmarshal([]byte(body), &jobs) != nil {
		t.Errorf("River UI's API: %d %.200s", code, body)
	}
	code, body = get(t, "http://"+addr+"/debug/transport", "ops", "correct-horse-battery")
	var snap struct {
		GlobalLimit int `json:"global_limit"`
		Buckets     []struct {
			Name  string `json:"name"`
			Route string `json:"route"`
		} `json:"buckets"`
	}
	if code != http.StatusOK || json.Unmarshal([]byte(body), &snap) != nil || snap.GlobalLimit != 50 {
		t.Errorf("/debug/transport: %d %.300s", code, body)
	}
	if strings.Contains(body, simtest.Token) {
		t.Error("/debug/transport shows the bot token")
	}
	var view struct {
		Self        string `json:"self"`
		GlobalShare int    `json:"global_share_per_second"`
		Processes   []struct {
			ID     string `json:"id"`
			Shards []int  `json:"shards"`
		} `json:"processes"`
	}
	wait.Until(t, "this process serving shard 0 in /debug/cluster", func() bool {
		code, body = get(t, "http://"+addr+"/debug/cluster", "ops", "correct-horse-battery")
		return code == http.StatusOK && json.Unmarshal([]byte(body), &view) == nil && len(view.Processes) == 1 && len(view.Processes[0].Shards) == 1
	})
	if view.Processes[0].ID != view.Self || view.GlobalShare != 50 {
		t.Errorf("/debug/cluster: %.300s", body)
	}
}

// Without credentials the tools serve on loopback only; on any other
// address they refuse and River's UI is not started.
func TestOperatorToolsWithoutCredentials(t *testing.T) {
	t.Parallel()
	local := runWith(t, nil)
	if code, _ := get(t, "http://"+local+"/debug/transport", "", ""); code != http.StatusOK {
		t.Errorf("loopback /debug/transport: %d, want 200", code)
	}
	exposed := runWith(t, map[string]string{"HERALD_HTTP_ADDR": "0.0.0.0:0"})
	port := exposed[strings.LastIndex(exposed, ":"):]
	for _, path := range []string{"/riverui/", "/debug/transport"} {
		if code, body := get(t, "http://127.0.0.1"+port+path, "", ""); code != http.StatusForbidden || !strings.Contains(body, "HERALD_ADMIN_USER") {
			t.Errorf("%s on 0.0.0.0 without credentials: %d %s, want 403 naming the settings", path, code, body)
		}
	}
}
