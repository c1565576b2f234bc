package adminhttp

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// A web page in the operator's browser cannot use the operator tools:
// a Host that is not this server's (DNS rebinding) gets 421, a
// cross-origin state-changing request 403, with credentials too (the
// browser would attach cached Basic credentials), and neither reaches the
// tools. IP addresses, localhost and configured names are this server's,
// whatever the port; same-origin requests and clients sending neither
// Origin nor Sec-Fetch-Site (curl) pass; health and metrics answer any Host.
func TestOperatorToolsRefuseWebPages(t *testing.T) {
	t.Parallel()
	var reached atomic.Int32
	ui := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		io.WriteString(w, "river ui "+r.Method)
	})
	transport := func() any { return map[string]int{"invalid_requests": 3} }
	type try struct {
		method, path, host string
		header             map[string]string
		status             int
	}
	foreign := map[string]string{"Origin": "http://attacker.example"}
	for _, tc := range []struct {
		name  string
		op    Operator
		tries []try
	}{
		{"loopback", Operator{RiverUI: ui, Transport: transport, Loopback: true}, []try{
			{"GET", "/riverui/api/jobs/1", "attacker.example:8080", nil, http.StatusMisdirectedRequest},
			{"GET", "/riverui/", "attacker.example", nil, http.StatusMisdirectedRequest},
			{"GET", "/debug/transport", "localhost.attacker.example:8080", nil, http.StatusMisdirectedRequest},
			{"POST", "/riverui/api/jobs/cancel", "127.0.0.1:8080", foreign, http.StatusForbidden},
			{"POST", "/riverui/api/jobs/delete", "127.0.0.1:8080", map[string]string{"Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
			{"PATCH", "/riverui/api/queues/events", "localhost:8080", map[string]string{"Sec-Fetch-Site": "same-site", "Origin": "http://localhost:8080"}, http.StatusForbidden},
			{"PUT", "/riverui/api/queues/events/pause", "localhost:8080", map[string]string{"Origin": "http://localhost:9999"}, http.StatusForbidden},
			{"DELETE", "/riverui/api/jobs/1", "localhost:8080", map[string]string{"Origin": "null"}, http.StatusForbidden},
			// This server's own names, any port.
			{"GET", "/riverui/", "127.0.0.1:8080", nil, http.StatusOK},
			{"GET", "/riverui/", "LOCALHOST:18080", nil, http.StatusOK},
			{"GET", "/riverui/", "[::1]:8080", nil, http.StatusOK},
			{"GET", "/debug/transport", "10.42.0.17", nil, http.StatusOK},
			// River UI's own pages, and curl.
			{"POST", "/riverui/api/jobs/cancel", "localhost:8080", map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": "http://localhost:8080"}, http.StatusOK},
			{"POST", "/riverui/api/jobs/cancel", "localhost:8080", map[string]string{"Origin": "http://localhost:8080"}, http.StatusOK},
			{"PUT", "/riverui/api/queues/events/pause", "127.0.0.1:8080", map[string]string{"Sec-Fetch-Site": "none"}, http.StatusOK},
			{"POST", "/riverui/api/jobs/delete", "127.0.0.1:8080", nil, http.StatusOK},
			// Reading is not refused for its Origin.
			{"GET", "/riverui/api/jobs", "127.0.0.1:8080", foreign, http.StatusOK},
		}},
		{"credentials and a reverse proxy's name", Operator{RiverUI: ui, Transport: transport, User: "ops", Password: "correct-horse-battery",
			Hosts: []string{"ops.example.com"}}, []try{
			{"GET", "/riverui/", "ops.example.com", nil, http.StatusOK},
			{"GET", "/riverui/", "OPS.example.com:443", nil, http.StatusOK},
			{"GET", "/riverui/", "example.com", nil, http.StatusMisdirectedRequest},
			{"POST", "/riverui/api/jobs/cancel", "ops.example.com", map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://attacker.example"}, http.StatusForbidden},
			{"POST", "/riverui/api/jobs/cancel", "ops.example.com", map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": "https://ops.example.com"}, http.StatusOK},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(Handler(nil, prometheus.NewRegistry(), slog.New(slog.DiscardHandler), tc.op))
			defer srv.Close()
			for _, tr := range tc.tries {
				req, _ := http.NewRequest(tr.method, srv.URL+tr.path, nil)
				req.Host = tr.host
				for k, v := range tr.header {
					req.Header.Set(k, v)
				}
				if tc.op.User != "" {
					req.SetBasicAuth("ops", "correct-horse-battery")
				}
				before := reached.Load()
				res, err := srv.Client().Do(req)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(res.Body)
				res.Body.Close()
				what := tr.method + " " + tr.path + " Host " + tr.host
				if res.StatusCode != tr.status {
					t.Errorf("%s %v: %d %s, want %d", what, tr.header, res.StatusCode, b, tr.status)
				}
				if tr.status != http.StatusOK {
					if reached.Load() != before {
						t.Errorf("%s %v: refused, but River UI saw it", what, tr.header)
					}
					if !strings.Contains(string(b), `"reason":`) || strings.Contains(string(b), "attacker") {
						t.Errorf("%s: refusal %s, want a JSON reason echoing nothing of the request", what, b)
					}
				}
			}
		})
	}
}

// /healthz, /readyz and /metrics answer kubelet probes and Prometheus by
// pod IP, and any other Host: they change nothing and need no
// credentials, so a page learns nothing there a network peer cannot.
func TestHealthAndMetricsAnswerAnyHost(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(Handler(func(context.Context) ([]string, error) { return nil, nil },
		prometheus.NewRegistry(), slog.New(slog.DiscardHandler), Operator{Loopback: true}))
	defer srv.Close()
	for _, path := range []string{"/healthz", "/readyz", "/metrics"} {
		for _, host := range []string{"10.42.0.17:8080", "herald.herald.svc.cluster.local:8080", "attacker.example"} {
			req, _ := http.NewRequest("GET", srv.URL+path, nil)
			req.Host = host
			res, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != http.StatusOK {
				t.Errorf("%s with Host %s: %d, want 200", path, host, res.StatusCode)
			}
		}
	}
}
