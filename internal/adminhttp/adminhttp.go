// Package adminhttp serves herald's operator endpoints: liveness,
// readiness, Prometheus metrics, and behind credentials River's UI and
// the REST engine's state. It carries no Discord traffic.
package adminhttp

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// ReadyFunc reports why herald cannot serve yet (err), and what works
// only in part while it can (notes: a Discord route whose circuit is
// open, say), which /readyz shows without failing.
type ReadyFunc func(ctx context.Context) (notes []string, err error)

// readyTimeout bounds one readiness check, so a black-holed database makes
// /readyz answer 503 quickly instead of hanging the probe.
const readyTimeout = 2 * time.Second

// Handler returns the admin mux: /healthz answers while the process runs,
// /readyz runs ready, /metrics exposes reg, and op's tools.
func Handler(ready ReadyFunc, reg *prometheus.Registry, log *slog.Logger, op Operator) http.Handler {
	mux := http.NewServeMux()
	// A probe polls every few seconds: log when the reason changes, not
	// every time it is asked.
	var mu sync.Mutex
	lastReason := ""
	logChange := func(ctx context.Context, reason string) {
		mu.Lock()
		defer mu.Unlock()
		if reason == lastReason {
			return
		}
		lastReason = reason
		if reason == "" {
			log.InfoContext(ctx, "ready")
			return
		}
		log.WarnContext(ctx, "not ready", "reason", reason)
	}
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, status{Status: "ok"})
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
		defer cancel()
		notes, err := ready(ctx)
		if err != nil {
			logChange(ctx, err.Error())
			writeJSON(w, http.StatusServiceUnavailable, status{Status: "unavailable", Reason: err.Error(), Notes: notes})
			return
		}
		logChange(ctx, "")
		writeJSON(w, http.StatusOK, status{Status: "ready", Notes: notes})
	})
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	op.mount(mux)
	return mux
}

// Server is the admin HTTP server for h, with timeouts so a slow or
// stuck client cannot hold its connections.
func Server(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}
}

type status struct {
	Status string   `json:"status"`
	Reason string   `json:"reason,omitempty"`
	Notes  []string `json:"notes,omitempty"`
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v) // the client hung up; nothing to do
}
