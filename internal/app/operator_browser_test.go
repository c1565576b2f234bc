package app

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/herald-bot/herald/internal/store/storetest"
	"github.com/herald-bot/herald/internal/testsupport/wait"
)

// browserRequest is a request as a browser sends it on behalf of a page:
// the Host it sends and the headers it adds.
type browserRequest struct {
	method, path, body string
	host               string // "" for the admin address itself
	header             map[string]string
}

func (b browserRequest) do(t *testing.T, addr string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(b.method, "http://"+addr+b.path, strings.NewReader(b.body))
	if err != nil {
		t.Fatal(err)
	}
	if b.host != "" {
		req.Host = b.host
	}
	if b.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range b.header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(body)
}

// A page open in the operator's browser reaches a loopback admin server
// without credentials (issue 21, finding 6). With a foreign Origin it
// cancelled and deleted jobs through River UI's API; by DNS rebinding
// (its own name resolving to 127.0.0.1, so Host: attacker.example) it
// read their arguments. Now every such request is refused and changes
// nothing, while River UI's own pages, curl, probes and Prometheus go on.
func TestOperatorToolsRefuseWebPages(t *testing.T) {
	t.Parallel()
	dbURL := storetest.URL(t)
	addr := runWith(t, map[string]string{"DATABASE_URL": dbURL, "HERALD_ADMIN_HOSTS": "ops.example.com"})
	port := addr[strings.LastIndex(addr, ":"):]
	db, err := pgxpool.New(t.Context(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var id int64
	if err := db.QueryRow(t.Context(), `INSERT INTO river_job (kind, args, queue, max_attempts, state, scheduled_at)
		VALUES ('operator_test', '{"secret":"job-args-4711"}', 'background', 1, 'scheduled', now() + interval '1 hour') RETURNING id`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	jobState := func() string {
		var s string
		if err := db.QueryRow(t.Context(), `SELECT coalesce((SELECT state::text FROM river_job WHERE id = $1), 'deleted')`, id).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	paused := func() bool {
		var p bool
		if err := db.QueryRow(t.Context(), `SELECT paused_at IS NOT NULL FROM river_queue WHERE name = 'background'`).Scan(&p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	wait.Until(t, "River registers the background queue", func() bool {
		var n int
		db.QueryRow(t.Context(), `SELECT count(*) FROM river_queue WHERE name = 'background'`).Scan(&n)
		return n == 1
	})
	ids := `{"ids":["` + strconv.FormatInt(id, 10) + `"]}`
	jobPath := "/riverui/api/jobs/" + strconv.FormatInt(id, 10)

	for _, tc := range []struct {
		name string
		req  browserRequest
		code int
	}{
		{"rebinding reads a job's arguments", browserRequest{method: "GET", path: jobPath, host: "attacker.example" + port}, http.StatusMisdirectedRequest},
		{"rebinding reads the engine's state", browserRequest{method: "GET", path: "/debug/transport", host: "attacker.example" + port}, http.StatusMisdirectedRequest},
		{"rebinding loads River UI", browserRequest{method: "GET", path: "/riverui/", host: "attacker.example"}, http.StatusMisdirectedRequest},
		{"a foreign Origin cancels the job", browserRequest{method: "POST", path: "/riverui/api/jobs/cancel", body: ids,
			header: map[string]string{"Origin": "http://attacker.example"}}, http.StatusForbidden},
		{"a cross-site page deletes the job", browserRequest{method: "POST", path: "/riverui/api/jobs/delete", body: ids,
			header: map[string]string{"Origin": "http://attacker.example", "Sec-Fetch-Site": "cross-site"}}, http.StatusForbidden},
		{"a same-site page pauses a queue", browserRequest{method: "PUT", path: "/riverui/api/queues/background/pause",
			header: map[string]string{"Origin": "http://other.localhost" + port, "Sec-Fetch-Site": "same-site"}}, http.StatusForbidden},
		{"an opaque origin retries the job", browserRequest{method: "POST", path: "/riverui/api/jobs/retry", body: ids,
			header: map[string]string{"Origin": "null"}}, http.StatusForbidden},
	} {
		code, body := tc.req.do(t, addr)
		if code != tc.code || !strings.Contains(body, `"reason"`) {
			t.Errorf("%s: %d %.200s, want %d with a reason", tc.name, code, body, tc.code)
		}
		if strings.Contains(body, "job-args-4711") || strings.Contains(body, "attacker") {
			t.Errorf("%s: the refusal shows %.200s", tc.name, body)
		}
	}
	if s := jobState(); s != "scheduled" {
		t.Fatalf("after the refused requests the job is %s, want scheduled", s)
	}
	if paused() {
		t.Fatal("a refused request paused the queue")
	}

	// Probes and Prometheus reach /healthz, /readyz and /metrics by pod IP
	// or any name: those change nothing and need no credentials anyway.
	for _, path := range []string{"/healthz", "/readyz", "/metrics"} {
		for _, host := range []string{"10.42.0.17:8080", "herald.herald.svc:8080", "attacker.example"} {
			if code, _ := (browserRequest{method: "GET", path: path, host: host}).do(t, addr); code != http.StatusOK {
				t.Errorf("%s with Host %s: %d, want 200", path, host, code)
			}
		}
	}
	// River UI in the operator's browser, at localhost, an address or a
	// configured name (a reverse proxy's).
	for _, host := range []string{"localhost" + port, "[::1]" + port, "127.0.0.1:18080", "ops.example.com"} {
		if code, body := (browserRequest{method: "GET", path: jobPath, host: host}).do(t, addr); code != http.StatusOK || !strings.Contains(body, "job-args-4711") {
			t.Errorf("River UI's job page at %s: %d %.200s", host, code, body)
		}
	}
	code, body := browserRequest{method: "POST", path: "/riverui/api/jobs/cancel", body: ids, host: "localhost" + port,
		header: map[string]string{"Origin": "http://localhost" + port, "Sec-Fetch-Site": "same-origin"}}.do(t, addr)
	if code != http.StatusOK || jobState() != "cancelled" {
		t.Fatalf("River UI's own cancel: %d %.200s, job %s", code, body, jobState())
	}
	// A browser that sends no Sec-Fetch-Site: its Origin matches Host.
	code, body = browserRequest{method: "PUT", path: "/riverui/api/queues/background/pause",
		header: map[string]string{"Origin": "http://" + addr}}.do(t, addr)
	if code != http.StatusOK || !paused() {
		t.Fatalf("River UI's own pause: %d %.200s", code, body)
	}
	// curl sends neither header.
	if code, body := (browserRequest{method: "POST", path: "/riverui/api/jobs/delete", body: ids}).do(t, addr); code != http.StatusOK || jobState() != "deleted" {
		t.Fatalf("curl's delete: %d %.200s, job %s", code, body, jobState())
	}
}
