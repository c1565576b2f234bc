package transport

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/herald-bot/herald/internal/testsupport/clockwatch"
	"github.com/herald-bot/herald/internal/testsupport/wait"
)

// discord is a scripted stand-in for Discord's REST API: each test says
// what every request gets back, and the stand-in records when (on the fake
// clock) each request arrived. The simulator-backed tests in sim_test.go
// cover the same engine against the full simulator.
type discord struct {
	t     *testing.T
	clk   *clockwatch.Clock
	srv   *httptest.Server
	mu    sync.Mutex
	got   []received
	reply func(r *http.Request, n int) reply // n counts requests to the same path, from 1
	count map[string]int
}

type received struct {
	method, path string
	at           time.Time
}

type reply struct {
	status int
	header map[string]string
	body   string
	drop   bool // hijack and close: the answer is lost
}

func ok() reply { return reply{status: 200, body: `{}`} }

// limited returns a 2xx with bucket headers.
func limited(hash string, limit, remaining int, resetAfter string) reply {
	return reply{status: 200, body: `{}`, header: map[string]string{
		"X-RateLimit-Bucket": hash, "X-RateLimit-Limit": itoa(limit), "X-RateLimit-Remaining": itoa(remaining),
		"X-RateLimit-Reset-After": resetAfter, "X-RateLimit-Reset": "1700000000.000",
	}}
}

func itoa(n int) string { return strconv.Itoa(n) }

func newDiscord(t *testing.T, reply func(r *http.Request, n int) reply) *discord {
	t.Helper()
	d := &discord{t: t, clk: clockwatch.Watch(clockwork.NewFakeClock()), reply: reply, count: map[string]int{}}
	d.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d.mu.Lock()
		d.count[r.Method+" "+r.URL.Path]++
		n := d.count[r.Method+" "+r.URL.Path]
		d.got = append(d.got, received{r.Method, r.URL.Path, d.clk.Now()})
		d.mu.Unlock()
		io.Copy(io.Discard, r.Body)
		rep := d.reply(r, n)
		if rep.drop {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		w.Header().Set("Content-Type", "application/json")
		for k, v := range rep.header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(rep.status)
		io.WriteString(w, rep.body)
	}))
	t.Cleanup(d.srv.Close)
	return d
}

func (d *discord) engine(cfg Config) *Engine {
	cfg.Clock = d.clk
	cfg.Base = d.srv.Client().Transport
	if cfg.QueueTimeout == 0 {
		cfg.QueueTimeout = -1 // its timer would count as a clock waiter
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.ApplicationID == "" {
		cfg.ApplicationID = "900"
	}
	return New(cfg)
}

func (d *discord) requests() []received {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]received(nil), d.got...)
}

// waitRequests waits (in real time) until n requests have arrived.
func (d *discord) waitRequests(n int) []received {
	d.t.Helper()
	wait.Until(d.t, fmt.Sprintf("%d requests", n), func() bool { return len(d.requests()) >= n })
	return d.requests()
}

// quiet asserts no request beyond n arrives within a short real-time pause.
// It is an absence check with no event to wait for: its callers use it
// while a request is in flight or was just answered, or after a clock
// step that fired timers, and nothing in the engine tells when its
// workers have all parked again. (After a step that should wake nothing,
// clk.Woken says so exactly, without a pause.)
func (d *discord) quiet(n int) {
	d.t.Helper()
	time.Sleep(30 * time.Millisecond) // absence check: no event marks the engine's workers parked
	if got := d.requests(); len(got) != n {
		d.t.Fatalf("got %d requests, want still %d: %v", len(got), n, got)
	}
}

// countOf is how many requests to method and path (under /api/v10) have
// arrived.
func (d *discord) countOf(method, path string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.count[method+" /api/v10"+path]
}

// sleepers waits until n goroutines wait on the fake clock.
func (d *discord) sleepers(n int) {
	d.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := d.clk.BlockUntilContext(ctx, n); err != nil {
		d.t.Fatalf("waiting for %d sleepers: %v", n, err)
	}
}

type call struct {
	resp *http.Response
	body string
	err  error
}

// send starts one request and returns where its outcome arrives. Calls
// authenticated by a webhook or interaction token carry no bot token, as
// herald's REST client sends them.
func (d *discord) send(ctx context.Context, e *Engine, method, path string) <-chan call {
	auth := "Bot test-token"
	if strings.HasPrefix(path, "/webhooks/") || strings.HasPrefix(path, "/interactions/") {
		auth = ""
	}
	return d.sendAuth(ctx, e, method, path, auth)
}

// sendAuth is send with the Authorization header given ("" for none), as
// discordgo sets it on every call.
func (d *discord) sendAuth(ctx context.Context, e *Engine, method, path, auth string) <-chan call {
	ch := make(chan call, 1)
	req, err := http.NewRequestWithContext(ctx, method, d.srv.URL+"/api/v10"+path, bytes.NewReader([]byte(`{"content":"x"}`)))
	if err != nil {
		d.t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	go func() {
		resp, err := e.Do(req)
		c := call{resp: resp, err: err}
		if resp != nil {
			b, _ := io.ReadAll(resp.Body)
			c.body = string(b)
		}
		ch <- c
	}()
	return ch
}

// finished waits for a request started with start to return.
func finished(t *testing.T, ch <-chan call) call {
	t.Helper()
	select {
	case c := <-ch:
		return c
	case <-time.After(5 * time.Second):
		t.Fatal("request did not finish")
	}
	panic("unreachable")
}

// queued waits (in real time) until the engine holds n queued requests.
func (d *discord) queued(e *Engine, n int) {
	d.t.Helper()
	wait.Until(d.t, fmt.Sprintf("%d queued requests", n), func() bool {
		total := 0
		for _, b := range e.Snapshot().Buckets {
			total += b.QueueLength
		}
		return total == n
	})
}
