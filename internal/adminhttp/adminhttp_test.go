package adminhttp

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func TestEndpoints(t *testing.T) {
	var notReady atomic.Pointer[error]
	ready := func(ctx context.Context) ([]string, error) {
		if e := notReady.Load(); e != nil {
			return nil, *e
		}
		return []string{"circuit open: POST /channels/{channel_id}/messages"}, nil
	}
	reg := prometheus.NewRegistry()
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "herald_test_total", Help: "test"})
	reg.MustRegister(c)
	c.Add(3)
	srv := httptest.NewServer(Handler(ready, reg, slog.New(slog.DiscardHandler), Operator{}))
	defer srv.Close()

	get := func(path string) (int, string) {
		t.Helper()
		res, err := srv.Client().Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}

	if code, body := get("/healthz"); code != 200 || !strings.Contains(body, `"ok"`) {
		t.Errorf("/healthz = %d %s", code, body)
	}
	if code, body := get("/readyz"); code != 200 || !strings.Contains(body, `"ready"`) || !strings.Contains(body, "circuit open") {
		t.Errorf("/readyz = %d %s", code, body)
	}
	e := errors.New("database unreachable")
	notReady.Store(&e)
	code, body := get("/readyz")
	var st status
	if err := json.Unmarshal([]byte(body), &st); err != nil || code != 503 || st.Reason != "database unreachable" {
		t.Errorf("/readyz not ready = %d %s", code, body)
	}
	if code, body := get("/metrics"); code != 200 || !strings.Contains(body, "herald_test_total 3") {
		t.Errorf("/metrics = %d %s", code, body)
	}
	if code, _ := get("/nope"); code != 404 {
		t.Errorf("unknown path = %d", code)
	}
}
