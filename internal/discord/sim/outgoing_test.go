package sim_test

import (
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/discord/simtest"
	"github.com/herald-bot/herald/internal/testsupport/wait"
)

// endpoint is an Interactions Endpoint URL of the test's own. It checks
// signatures with the application's verify_key (unless trusting), answers
// PINGs with PONG and every other interaction with what answer returns.
type endpoint struct {
	*httptest.Server
	mu       sync.Mutex
	received []map[string]any
	opened   atomic.Int32 // connections the simulator opened to it
}

func newEndpoint(t *testing.T, s *simtest.Sim, trusting bool, answer func(w http.ResponseWriter, r *http.Request)) *endpoint {
	t.Helper()
	var app struct {
		VerifyKey string `json:"verify_key"`
	}
	s.Do("GET", "/applications/@me", nil).JSON(t, &app)
	key, err := hex.DecodeString(app.VerifyKey)
	if err != nil || len(key) != ed25519.PublicKeySize {
		t.Fatalf("verify_key %q is not a hex Ed25519 public key", app.VerifyKey)
	}
	e := &endpoint{}
	e.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		sig, _ := hex.DecodeString(r.Header.Get(sim.HeaderSignature))
		msg := append([]byte(r.Header.Get(sim.HeaderTimestamp)), body...)
		if !trusting && !ed25519.Verify(key, msg, sig) {
			http.Error(w, "invalid request signature", http.StatusUnauthorized)
			return
		}
		var in map[string]any
		json.Unmarshal(body, &in)
		if in["type"] == float64(1) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"type":1}`))
			return
		}
		e.mu.Lock()
		e.received = append(e.received, in)
		e.mu.Unlock()
		answer(w, r)
	}))
	e.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			e.opened.Add(1)
		}
	}
	e.Start()
	t.Cleanup(e.Close)
	return e
}

func (e *endpoint) first() map[string]any {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.received[0]
}

func reply(body string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(body))
	}
}

// liveWorld is a simulator on the real clock, which HTTP deliveries
// need, with the default fixture and a message carrying a button.
func liveWorld(t *testing.T, opts ...simtest.Option) (*simtest.Sim, sim.FixtureResult, sim.InteractionRequest) {
	t.Helper()
	t.Parallel()
	s := simtest.New(t, opts...)
	g := s.CreateGuild(sim.DefaultFixture())
	var msg struct{ ID string }
	s.Do("POST", "/channels/"+g.Channel("general")+"/messages", map[string]any{"content": "menu"}).JSON(t, &msg)
	return s, g, sim.InteractionRequest{Kind: "component", GuildID: g.ID, ChannelID: g.Channel("general"),
		UserID: g.Member("alice"), MessageID: msg.ID, CustomID: "pick"}
}

// An endpoint that checks signatures is saved; from then on each
// interaction is POSTed to it, signed, instead of sent over the gateway,
// and its HTTP response is the initial response: the callback route then
// answers 40060, as for any interaction already acknowledged.
func TestInteractionsArePostedToTheEndpoint(t *testing.T) {
	s, _, click := liveWorld(t)
	e := newEndpoint(t, s, false, reply(`{"type":4,"data":{"content":"picked","flags":64}}`))
	s.SetInteractionsEndpoint(e.URL)
	var app map[string]any
	s.Do("GET", "/applications/@me", nil).JSON(t, &app)
	if app["interactions_endpoint_url"] != e.URL {
		t.Fatalf("interactions_endpoint_url = %v, want %s", app["interactions_endpoint_url"], e.URL)
	}

	in := s.Interact(click)
	var st sim.InteractionStatus
	wait.Until(t, "the endpoint's answer", func() bool { st = s.Interaction(in.ID); return st.Acked || st.DeliveryError != "" })
	if !st.Acked || st.AnsweredVia != sim.ViaResponse || st.Original["content"] != "picked" || st.DeliveryError != "" {
		t.Fatalf("after the endpoint answered: %+v", st)
	}
	if got := e.first(); got["id"] != in.ID || got["token"] != in.Token || got["type"] != float64(3) {
		t.Errorf("the endpoint got %v", got)
	}
	r := s.Do("POST", "/interactions/"+in.ID+"/"+in.Token+"/callback", map[string]any{"type": 6})
	wantError(t, r, http.StatusBadRequest, 40060)
}

// Saving a URL is refused with Discord's 50035 when the endpoint accepts a
// forged signature or does not answer PING with {"type": 1}; the setting
// stays as it was and interactions still go over the gateway.
func TestUnverifiableEndpointsAreRefused(t *testing.T) {
	s, _, _ := liveWorld(t)
	trusting := newEndpoint(t, s, true, reply(`{"type":5}`))
	mute := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"type":4}`))
	}))
	t.Cleanup(mute.Close)
	for name, url := range map[string]string{"accepts forged signatures": trusting.URL, "no PONG": mute.URL} {
		body := rawControl(t, "POST", s.URL+"/_sim/application", `{"interactions_endpoint_url": "`+url+`"}`, http.StatusBadRequest)
		var e errorBody
		json.Unmarshal(body, &e)
		if e.Code != 50035 || !strings.Contains(string(body), "The specified interactions endpoint url could not be verified.") {
			t.Errorf("%s: answered %s", name, body)
		}
	}
	rawControl(t, "POST", s.URL+"/_sim/application", `{"interactions_endpoint_url": "ftp://example.com"}`, http.StatusBadRequest)
	var app map[string]any
	s.Do("GET", "/applications/@me", nil).JSON(t, &app)
	if app["interactions_endpoint_url"] != nil {
		t.Errorf("a refused URL was saved: %v", app["interactions_endpoint_url"])
	}
}

// An endpoint that answers too late, with another status or with a body
// the callback route would refuse leaves the interaction unanswered
// ("This interaction failed"), and says why.
func TestFailedAnswersLeaveTheInteractionUnanswered(t *testing.T) {
	s, _, click := liveWorld(t, simtest.WithOptions(sim.Options{TimeScale: 0.1}))
	for _, tc := range []struct {
		name   string
		answer func(http.ResponseWriter, *http.Request)
		want   string
	}{
		// Holds the request until the simulator gives up on it.
		{"late", func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() }, "no answer"},
		{"500", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(500) }, "HTTP 500"},
		{"invalid type", reply(`{"type":99}`), "50035"},
		{"not JSON", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok")) }, "Content-Type"},
	} {
		e := newEndpoint(t, s, false, tc.answer)
		s.SetInteractionsEndpoint(e.URL)
		in := s.Interact(click)
		var st sim.InteractionStatus
		wait.Until(t, "the delivery's outcome", func() bool { st = s.Interaction(in.ID); return st.Acked || st.DeliveryError != "" })
		if st.Acked || !strings.Contains(st.DeliveryError, tc.want) {
			t.Errorf("%s: status %+v, want unanswered with %q", tc.name, st, tc.want)
		}
	}
}

// An application may answer through the callback route instead, and then
// answers the HTTP request 202 without a body ("Interaction Callback").
func TestEndpointMayAnswerThroughTheCallbackRoute(t *testing.T) {
	s, _, click := liveWorld(t)
	var e *endpoint
	e = newEndpoint(t, s, false, func(w http.ResponseWriter, _ *http.Request) {
		in := e.first()
		if r := s.Do("POST", "/interactions/"+in["id"].(string)+"/"+in["token"].(string)+"/callback", map[string]any{"type": 6}); r.Status != http.StatusNoContent {
			t.Errorf("callback: %d %s", r.Status, r.Body)
		}
		w.WriteHeader(http.StatusAccepted)
	})
	s.SetInteractionsEndpoint(e.URL)
	in := s.Interact(click)
	var st sim.InteractionStatus
	wait.Until(t, "the answer", func() bool { st = s.Interaction(in.ID); return st.Acked })
	if st.AnsweredVia != sim.ViaCallback || st.AckType != 6 || st.DeliveryError != "" {
		t.Errorf("status %+v", st)
	}
}

// Interactions posted at once keep their connections: a second burst as
// large as the first opens none. With http.DefaultTransport's 2 idle
// connections per host it would dial all but two again, and the
// simulator, not the endpoint, would set the pace of a bench.
func TestConcurrentDeliveriesReuseConnections(t *testing.T) {
	s, _, click := liveWorld(t)
	const parallel = 16
	arrived := make(chan struct{}, parallel)
	release := make(chan struct{})
	e := newEndpoint(t, s, false, func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-release
		reply(`{"type":6}`)(w, r)
	})
	s.SetInteractionsEndpoint(e.URL)
	for range 2 {
		var ids []string
		for range parallel {
			ids = append(ids, s.Interact(click).ID)
		}
		for range parallel {
			<-arrived
		}
		for range parallel {
			release <- struct{}{}
		}
		wait.Until(t, "every answer read", func() bool {
			return !slices.ContainsFunc(ids, func(id string) bool { return !s.Interaction(id).Acked })
		})
	}
	// A connection goes back to the pool just after its answer is read,
	// so a second burst may, rarely, start before the last one is back.
	if n := int(e.opened.Load()); n < parallel || n > parallel+2 {
		t.Errorf("%d connections opened for 2 bursts of %d interactions at once, want %d (at most 2 more)", n, parallel, parallel)
	}
}
