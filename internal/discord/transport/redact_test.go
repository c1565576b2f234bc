package transport

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/herald-bot/herald/internal/freeport"
)

// A failed connection never puts a token in an error or a log line. The
// base RoundTripper here goes through an http.Client, as instrumentation
// wrappers do, so failures arrive as *url.Error holding the full URL.
func TestNetworkErrorsNeverShowTokens(t *testing.T) {
	t.Parallel()
	const token = "secret-token-4f1d"
	refusing, release, err := freeport.Refusing()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(release)
	tests := []struct {
		name, path string
		fault      string // refused, dropped, timeout
		template   string
		check      func(error) bool
	}{
		{"interaction callback, connection refused", "/interactions/1/" + token + "/callback", "refused",
			"/interactions/{interaction_id}/{interaction_token}/callback",
			func(err error) bool {
				var op *net.OpError
				var tr *TransientError
				return errors.As(err, &op) && errors.As(err, &tr)
			}},
		{"webhook execute, connection refused", "/webhooks/44/" + token, "refused",
			"/webhooks/{webhook_id}/{webhook_token}",
			func(err error) bool {
				var op *net.OpError
				var tr *TransientError
				return errors.As(err, &op) && errors.As(err, &tr)
			}},
		{"webhook execute, connection dropped after the request", "/webhooks/44/" + token + "?wait=true", "dropped",
			"/webhooks/{webhook_id}/{webhook_token}",
			func(err error) bool { var uo *UnknownOutcomeError; return errors.As(err, &uo) }},
		{"follow-up, no answer in time", "/webhooks/900/" + token, "timeout",
			"/webhooks/{application_id}/{interaction_token}",
			func(err error) bool {
				var uo *UnknownOutcomeError
				return errors.As(err, &uo) && errors.Is(err, context.DeadlineExceeded)
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			release := make(chan struct{})
			d := newDiscord(t, func(r *http.Request, n int) reply {
				if tc.fault == "timeout" {
					<-release
				}
				return reply{drop: true}
			})
			defer close(release)
			client := &http.Client{Transport: d.srv.Client().Transport}
			// Only the timeout case waits for the request's deadline: in
			// the others a loaded machine's slow dial must not reach it.
			timeout := 10 * time.Second
			if tc.fault == "timeout" {
				timeout = 50 * time.Millisecond
			}
			logs := &lockedBuffer{}
			e := New(Config{Clock: d.clk, QueueTimeout: -1, ApplicationID: "900", MaxRetries: 1,
				BackoffBase: time.Millisecond, BackoffCap: time.Millisecond, RequestTimeout: timeout,
				Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
				Base: roundTripFunc(func(req *http.Request) (*http.Response, error) {
					if tc.fault == "refused" {
						req = req.Clone(req.Context())
						req.URL.Host = refusing
					}
					return client.Do(req)
				})})
			ch := d.send(t.Context(), e, "POST", tc.path)
			if tc.fault == "refused" {
				d.sleepers(1) // the backoff before the one retry
				d.clk.Advance(time.Millisecond)
			}
			c := finished(t, ch)
			if c.err == nil || !tc.check(c.err) {
				t.Fatalf("err = %v (%T)", c.err, c.err)
			}
			if strings.Contains(c.err.Error(), token) {
				t.Errorf("the error shows the token: %v", c.err)
			}
			var ue *url.Error
			if !errors.As(c.err, &ue) || ue.URL != tc.template {
				t.Errorf("url.Error = %+v, want the route template", ue)
			}
			if logs.String() == "" || strings.Contains(logs.String(), token) {
				t.Errorf("logs (want some, without the token):\n%s", logs.String())
			}
		})
	}
}

// lockedBuffer is a bytes.Buffer safe for the engine's goroutines to log to.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
