package adminhttp

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// The operator tools answer with the right credentials only; without
// credentials only on loopback; elsewhere they refuse and say why.
func TestOperatorTools(t *testing.T) {
	t.Parallel()
	ui := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "river ui at "+r.URL.Path) })
	transport := func() any { return map[string]int{"invalid_requests": 3} }
	type try struct {
		path, user, password string
		status               int
		body                 string
	}
	for _, tc := range []struct {
		name  string
		op    Operator
		tries []try
	}{
		{"credentials", Operator{RiverUI: ui, Transport: transport, User: "ops", Password: "correct-horse-battery"}, []try{
			{"/riverui/", "", "", http.StatusUnauthorized, "credentials required"},
			{"/debug/transport", "", "", http.StatusUnauthorized, "credentials required"},
			{"/riverui/jobs", "ops", "wrong-horse-battery", http.StatusUnauthorized, "credentials required"},
			{"/debug/transport", "admin", "correct-horse-battery", http.StatusUnauthorized, "credentials required"},
			{"/riverui/jobs", "ops", "correct-horse-battery", http.StatusOK, "river ui at /riverui/jobs"},
			{"/debug/transport", "ops", "correct-horse-battery", http.StatusOK, `"invalid_requests":3`},
		}},
		{"loopback without credentials", Operator{RiverUI: ui, Transport: transport, Loopback: true}, []try{
			{"/riverui/", "", "", http.StatusOK, "river ui"},
			{"/debug/transport", "", "", http.StatusOK, `"invalid_requests":3`},
		}},
		{"exposed without credentials", Operator{Transport: transport}, []try{
			{"/riverui/", "", "", http.StatusForbidden, "HERALD_ADMIN_USER and HERALD_ADMIN_PASSWORD"},
			{"/debug/transport", "ops", "correct-horse-battery", http.StatusForbidden, "not a loopback address"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(Handler(nil, prometheus.NewRegistry(), slog.New(slog.DiscardHandler), tc.op))
			defer srv.Close()
			for _, tr := range tc.tries {
				req, _ := http.NewRequest(http.MethodGet, srv.URL+tr.path, nil)
				if tr.user != "" {
					req.SetBasicAuth(tr.user, tr.password)
				}
				res, err := srv.Client().Do(req)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(res.Body)
				res.Body.Close()
				if res.StatusCode != tr.status || !strings.Contains(string(b), tr.body) {
					t.Errorf("%s as %q: %d %s, want %d containing %q", tr.path, tr.user, res.StatusCode, b, tr.status, tr.body)
				}
				if res.StatusCode == http.StatusUnauthorized && res.Header.Get("WWW-Authenticate") == "" {
					t.Errorf("%s: 401 without WWW-Authenticate", tr.path)
				}
			}
		})
	}
	if (Operator{}).Open() || !(Operator{Loopback: true}).Open() || !(Operator{User: "ops"}).Open() {
		t.Error("Open: tools run with credentials or on loopback only")
	}
}
