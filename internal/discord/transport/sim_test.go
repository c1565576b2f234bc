package transport_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/discord/simtest"
	"github.com/herald-bot/herald/internal/discord/transport"
	"github.com/herald-bot/herald/internal/testsupport/wait"
)

// simClient sends through an engine to a simulator; with a fake clock the
// engine and the simulator share it, so waits are exact.
type simClient struct {
	t *testing.T
	s *simtest.Sim
	e *transport.Engine
}

func newSimClient(t *testing.T, s *simtest.Sim) *simClient {
	t.Helper()
	cfg := transport.Config{ApplicationID: s.ApplicationID(), QueueTimeout: -1, BackoffBase: time.Millisecond, BackoffCap: time.Millisecond}
	if s.Clock != nil {
		cfg.Clock = s.Clock
	}
	return &simClient{t: t, s: s, e: transport.New(cfg)}
}

// do sends one call through the engine and returns Discord's body.
func (c *simClient) do(ctx context.Context, method, path string, body any, bot bool) ([]byte, error) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.s.URL+"/api/v10"+path, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if bot {
		req.Header.Set("Authorization", "Bot "+simtest.Token)
	}
	resp, err := c.e.Do(req)
	if resp != nil {
		b, _ := io.ReadAll(resp.Body)
		return b, err
	}
	return nil, err
}

// Every Discord error the simulator produces for herald's routes maps to
// the class the job layer acts on.
func TestClassifySimulatorErrors(t *testing.T) {
	t.Parallel()
	s := simtest.New(t, simtest.WithFakeClock())
	g := s.CreateGuild(sim.DefaultFixture())
	c := newSimClient(t, s)
	ctx := t.Context()
	general, mod, alice := g.Channel("general"), g.Role("Moderator"), g.Member("alice")
	in := s.Interact(sim.InteractionRequest{GuildID: g.ID, ChannelID: general, UserID: alice, Kind: "command", Name: "ping"})
	late := s.Interact(sim.InteractionRequest{GuildID: g.ID, ChannelID: general, UserID: alice, Kind: "command", Name: "ping"})
	if _, err := c.do(ctx, "POST", "/interactions/"+in.ID+"/"+in.Token+"/callback", map[string]any{"type": 5}, false); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name         string
		method, path string
		body         any
		bot          bool
		class        transport.Class
		code         int
		before       func()
	}{
		{"role above the bot", "PUT", "/guilds/" + g.ID + "/members/" + alice + "/roles/" + mod, nil, true, transport.Permission, 50013, nil},
		{"unknown channel", "GET", "/channels/999999999999999999", nil, true, transport.NotFound, 10003, nil},
		{"unknown message", "GET", "/channels/" + general + "/messages/999999999999999999", nil, true, transport.NotFound, 10008, nil},
		{"unknown role", "DELETE", "/guilds/" + g.ID + "/roles/999999999999999999", nil, true, transport.NotFound, 10011, nil},
		{"unknown member", "GET", "/guilds/" + g.ID + "/members/999999999999999999", nil, true, transport.NotFound, 10007, nil},
		{"unknown webhook", "POST", "/webhooks/999999999999999999/tok", map[string]any{"content": "x"}, false, transport.NotFound, 10015, nil},
		{"content too long", "POST", "/channels/" + general + "/messages", map[string]any{"content": strings.Repeat("x", 2001)}, true, transport.Invalid, 50035, nil},
		{"empty message", "POST", "/channels/" + general + "/messages", map[string]any{"content": ""}, true, transport.Invalid, 50006, nil},
		{"second ack", "POST", "/interactions/" + in.ID + "/" + in.Token + "/callback", map[string]any{"type": 5}, false, transport.Invalid, 40060, nil},
		{"ack after 3 s", "POST", "/interactions/" + late.ID + "/" + late.Token + "/callback", map[string]any{"type": 5}, false, transport.NotFound, 10062,
			func() { s.Clock.Advance(3*time.Second + time.Millisecond) }},
	}
	for _, tc := range tests {
		if tc.before != nil {
			tc.before()
		}
		_, err := c.do(ctx, tc.method, tc.path, tc.body, tc.bot)
		var api *transport.APIError
		if !errors.As(err, &api) || api.Code != tc.code {
			t.Errorf("%s: err = %v, want Discord code %d", tc.name, err, tc.code)
			continue
		}
		if cls, _ := transport.Classify(err); cls != tc.class {
			t.Errorf("%s: class %s, want %s", tc.name, cls, tc.class)
		}
	}
	if st := s.Stats(); st.RateLimited["user"]+st.RateLimited["global"] != 0 {
		t.Errorf("429s while classifying: %v", st.RateLimited)
	}
}

// A burst into one channel is paced by the simulator's own headers: no
// 429, five messages per window, each window exactly five seconds apart.
func TestBurstAgainstSimulatorSeesNo429(t *testing.T) {
	t.Parallel()
	s := simtest.New(t, simtest.WithFakeClock())
	g := s.CreateGuild(sim.DefaultFixture())
	c := newSimClient(t, s)
	ch := g.Channel("general")
	t0 := s.Clock.Now()
	done := make(chan error, 12)
	for range 12 {
		go func() {
			_, err := c.do(t.Context(), "POST", "/channels/"+ch+"/messages", map[string]any{"content": "hi"}, true)
			done <- err
		}()
	}
	for window := 1; window <= 2; window++ {
		wait.Until(t, "window", func() bool { return len(s.Server.Requests()) >= 5*window })
		if err := s.Clock.BlockUntilContext(t.Context(), 1); err != nil {
			t.Fatal(err)
		}
		s.Clock.Advance(5 * time.Second)
	}
	for range 12 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	var offsets []time.Duration
	for _, r := range s.Server.Requests() {
		if r.Status == http.StatusTooManyRequests {
			t.Errorf("429 at +%s", r.Time.Sub(t0))
		}
		offsets = append(offsets, r.Time.Sub(t0))
	}
	for i, off := range offsets {
		if want := time.Duration(i/5) * 5 * time.Second; off != want {
			t.Errorf("request %d at +%s, want +%s", i, off, want)
		}
	}
}

// A new bucket hash mid-burst moves the route to a fresh bucket without
// a 429.
func TestSimulatorHashChange(t *testing.T) {
	t.Parallel()
	s := simtest.New(t, simtest.WithFakeClock())
	g := s.CreateGuild(sim.DefaultFixture())
	c := newSimClient(t, s)
	ch := g.Channel("general")
	send := func() {
		if _, err := c.do(t.Context(), "POST", "/channels/"+ch+"/messages", map[string]any{"content": "hi"}, true); err != nil {
			t.Fatal(err)
		}
	}
	send()
	s.SetFault(sim.Fault{Route: "POST /channels/{channel_id}/messages", ChangeBucketHash: true})
	for range 4 {
		send()
	}
	hashes := map[string]bool{}
	for _, r := range s.Server.Requests() {
		hashes[r.Bucket] = true
		if r.Status != 200 {
			t.Errorf("status %d", r.Status)
		}
	}
	if len(hashes) != 2 {
		t.Errorf("bucket hashes seen = %v, want the old and the new", hashes)
	}
}

// A create whose answer is lost is an unknown outcome and is not resent;
// the same create with a nonce and enforce_nonce, marked idempotent, is
// resent and Discord keeps exactly one message.
func TestSimulatorUnknownOutcome(t *testing.T) {
	t.Parallel()
	s := simtest.New(t)
	g := s.CreateGuild(sim.DefaultFixture())
	c := newSimClient(t, s)
	ch := g.Channel("general")
	s.SetFault(sim.Fault{Route: "POST /channels/{channel_id}/messages", DropAfterApply: 1})
	_, err := c.do(t.Context(), "POST", "/channels/"+ch+"/messages", map[string]any{"content": "blind"}, true)
	if cls, _ := transport.Classify(err); cls != transport.UnknownOutcome {
		t.Fatalf("err = %v, want unknown outcome", err)
	}
	if n := len(s.Messages(ch)); n != 1 {
		t.Fatalf("messages = %d: the create was applied once and not resent", n)
	}

	s.SetFault(sim.Fault{Route: "POST /channels/{channel_id}/messages", DropAfterApply: 1})
	body := map[string]any{"content": "safe", "nonce": "job-42", "enforce_nonce": true}
	if _, err := c.do(transport.WithIdempotent(t.Context()), "POST", "/channels/"+ch+"/messages", body, true); err != nil {
		t.Fatalf("idempotent create: %v", err)
	}
	var safe int
	for _, m := range s.Messages(ch) {
		if m.Content == "safe" {
			safe++
		}
	}
	if safe != 1 {
		t.Errorf("nonce-protected messages = %d, want exactly 1", safe)
	}
}

// Injected 5xx answers are retried until Discord recovers.
func TestSimulatorServerErrorsAreRetried(t *testing.T) {
	t.Parallel()
	s := simtest.New(t)
	g := s.CreateGuild(sim.DefaultFixture())
	c := newSimClient(t, s)
	s.SetFault(sim.Fault{Route: "GET /guilds/{guild_id}/roles", Status: 503, Count: 2})
	if _, err := c.do(t.Context(), "GET", "/guilds/"+g.ID+"/roles", nil, true); err != nil {
		t.Fatal(err)
	}
	var codes []int
	for _, r := range s.Server.Requests() {
		codes = append(codes, r.Status)
	}
	if len(codes) != 3 || codes[0] != 503 || codes[1] != 503 || codes[2] != 200 {
		t.Errorf("statuses = %v, want 503 503 200", codes)
	}
}

// Discord requires "User-Agent: DiscordBot ($url, $versionNumber)" on
// every REST request (reference, "HTTP API: User Agent"): the engine puts
// its own on every request, herald's and discordgo's alike, replacing the
// one discordgo sets, and the simulator refuses none of them.
func TestEveryRequestCarriesTheUserAgent(t *testing.T) {
	t.Parallel()
	s := simtest.New(t)
	g := s.CreateGuild(sim.DefaultFixture())
	const agent = "DiscordBot (https://github.com/herald-bot/herald, 1.2.3)"
	e := transport.New(transport.Config{ApplicationID: s.ApplicationID(), UserAgent: agent})
	req, _ := http.NewRequest(http.MethodGet, s.URL+"/api/v10/channels/"+g.Channel("general"), nil)
	req.Header.Set("Authorization", "Bot "+simtest.Token)
	if resp, err := e.Do(req); err != nil {
		t.Fatalf("herald's own call: %v", err)
	} else {
		resp.Body.Close()
	}
	rt, err := transport.Rewrite(e.RoundTripper(), s.URL+"/api/v10")
	if err != nil {
		t.Fatal(err)
	}
	dg := s.Session()
	dg.Client = &http.Client{Transport: rt}
	if _, err := dg.Channel(g.Channel("general")); err != nil {
		t.Fatalf("discordgo's call: %v", err)
	}
	recs := s.Requests()
	if len(recs) != 2 {
		t.Fatalf("%d requests, want 2", len(recs))
	}
	for _, r := range recs {
		if r.UserAgent != agent {
			t.Errorf("%s %s carried %q, want %q", r.Method, r.Route, r.UserAgent, agent)
		}
	}
	if st := s.Stats(); st.RefusedUserAgent != 0 {
		t.Errorf("the simulator refused %d requests for their User-Agent", st.RefusedUserAgent)
	}

	// The default names herald's development version.
	def := transport.New(transport.Config{ApplicationID: s.ApplicationID()})
	req, _ = http.NewRequest(http.MethodGet, s.URL+"/api/v10/users/@me", nil)
	req.Header.Set("Authorization", "Bot "+simtest.Token)
	req.Header.Set("User-Agent", "Go-http-client/1.1")
	if resp, err := def.Do(req); err != nil {
		t.Fatalf("with the default agent: %v", err)
	} else {
		resp.Body.Close()
	}
	if got := s.Requests()[2].UserAgent; got != "DiscordBot (https://github.com/herald-bot/herald, dev)" {
		t.Errorf("default User-Agent %q", got)
	}
}

// The simulator refuses a request whose User-Agent is not Discord's
// "DiscordBot (url, version)" as Discord's Cloudflare does (403, code
// 40333): the engine calls that blocked, not a missing permission.
func TestSimulatorUserAgentBlockIsBlocked(t *testing.T) {
	t.Parallel()
	s := simtest.New(t)
	g := s.CreateGuild(sim.DefaultFixture())
	e := transport.New(transport.Config{ApplicationID: s.ApplicationID(), UserAgent: "Mozilla/5.0 (X11; Linux x86_64)"})
	req, _ := http.NewRequest(http.MethodGet, s.URL+"/api/v10/channels/"+g.Channel("general"), nil)
	req.Header.Set("Authorization", "Bot "+simtest.Token)
	_, err := e.Do(req)
	if cls, wait := transport.Classify(err); cls != transport.Blocked || wait <= 0 {
		t.Fatalf("err = %v: class %s, wait %s", err, cls, wait)
	}
	if h := e.Health(); h.Err() == nil || !strings.Contains(h.EdgeBlockedReason, "40333") {
		t.Fatalf("health %+v", h)
	}
	if st := s.Stats(); st.RefusedUserAgent != 1 {
		t.Fatalf("stats %+v", st)
	}
}
