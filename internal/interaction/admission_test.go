package interaction_test

import (
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/interaction"
	"github.com/herald-bot/herald/internal/testsupport/metricvalue"
	"github.com/herald-bot/herald/internal/testsupport/wait"
)

// ping is a signed PING, which the endpoint answers without the fast path.
var ping = []byte(`{"id":"1","application_id":"2","type":1,"token":"t","version":1}`)

// admission serves an endpoint that waits wait for a slot, and sends
// signed PINGs to it.
type admission struct {
	t    *testing.T
	key  ed25519.PrivateKey
	reg  *prometheus.Registry
	srv  *httptest.Server
	sent []chan int
}

func newAdmission(t *testing.T, wait time.Duration) *admission {
	pub, key, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	e, err := interaction.NewEndpoint(nil, hex.EncodeToString(pub), reg, nil)
	if err != nil {
		t.Fatal(err)
	}
	interaction.SetAdmitWait(e, wait)
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	return &admission{t: t, key: key, reg: reg, srv: srv}
}

// send posts a signed PING whose body arrives only when the returned
// writer is written and closed (nil: at once); the status comes on the
// channel.
func (a *admission) send(held bool) *io.PipeWriter {
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	var body io.Reader = bytes.NewReader(ping)
	var w *io.PipeWriter
	if held {
		body, w = io.Pipe()
		// A body never sent would keep the server from closing.
		a.t.Cleanup(func() { w.CloseWithError(io.ErrUnexpectedEOF) })
	}
	req, err := http.NewRequest(http.MethodPost, a.srv.URL, body)
	if err != nil {
		a.t.Fatal(err)
	}
	req.Header.Set(sim.HeaderTimestamp, ts)
	req.Header.Set(sim.HeaderSignature, hex.EncodeToString(ed25519.Sign(a.key, append([]byte(ts), ping...))))
	status := make(chan int, 1)
	a.sent = append(a.sent, status)
	go func() {
		res, err := a.srv.Client().Do(req)
		if err != nil {
			status <- 0
			return
		}
		res.Body.Close()
		status <- res.StatusCode
	}()
	return w
}

func release(ws []*io.PipeWriter) {
	for _, w := range ws {
		w.Write(ping)
		w.Close()
	}
}

// The endpoint reads and serves at most MaxInFlight requests at once,
// however many arrive: the others wait with their bodies unread, and are
// served as slots free.
func TestEndpointBoundsTheRequestsItReads(t *testing.T) {
	t.Parallel()
	a := newAdmission(t, time.Hour)
	var held []*io.PipeWriter
	for range interaction.MaxInFlight + 3 {
		held = append(held, a.send(true))
	}
	wait.Until(t, "every slot taken and three requests waiting", func() bool {
		return metricvalue.Of(t, a.reg, "herald_interactions_endpoint_in_flight", nil) == interaction.MaxInFlight &&
			metricvalue.Of(t, a.reg, "herald_interactions_endpoint_waiting", nil) == 3
	})
	release(held)
	for i, s := range a.sent {
		if got := <-s; got != http.StatusOK {
			t.Errorf("PING %d answered %d, want 200", i, got)
		}
	}
	if n, w := metricvalue.Of(t, a.reg, "herald_interactions_endpoint_in_flight", nil), metricvalue.Of(t, a.reg, "herald_interactions_endpoint_waiting", nil); n != 0 || w != 0 {
		t.Errorf("after the answers: %v in flight, %v waiting", n, w)
	}
}

// A request that finds no slot within the wait is refused 503 and counted
// as busy; the ones holding the slots are served.
func TestEndpointRefusesARequestThatWaitsTooLong(t *testing.T) {
	t.Parallel()
	a := newAdmission(t, 20*time.Millisecond)
	var held []*io.PipeWriter
	for range interaction.MaxInFlight {
		held = append(held, a.send(true))
	}
	wait.Until(t, "every slot taken", func() bool {
		return metricvalue.Of(t, a.reg, "herald_interactions_endpoint_in_flight", nil) == interaction.MaxInFlight
	})
	a.send(false)
	if got := <-a.sent[len(a.sent)-1]; got != http.StatusServiceUnavailable {
		t.Errorf("the request that found no slot: %d, want 503", got)
	}
	if n := metricvalue.Of(t, a.reg, "herald_interactions_endpoint_refused_total", map[string]string{"reason": "busy"}); n != 1 {
		t.Errorf("refused as busy: %v, want 1", n)
	}
	release(held)
	for i, s := range a.sent[:len(held)] {
		if got := <-s; got != http.StatusOK {
			t.Errorf("PING %d answered %d, want 200", i, got)
		}
	}
}
