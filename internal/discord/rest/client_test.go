package rest_test

import (
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/herald-bot/herald/internal/discord/rest"
	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/discord/simtest"
	"github.com/herald-bot/herald/internal/discord/transport"
)

// world is a simulator with the default guild and a client of the bot.
type world struct {
	s  *simtest.Sim
	g  sim.FixtureResult
	c  *rest.Client
	rt *recorder
}

func newWorld(t *testing.T, f sim.Fixture) *world {
	t.Helper()
	s := simtest.New(t)
	g := s.CreateGuild(f)
	rt := &recorder{next: s.Client.Transport}
	e := transport.New(transport.Config{ApplicationID: s.ApplicationID(), Base: rt})
	return &world{s: s, g: g, c: rest.New(e, s.URL+"/api/v10", simtest.Token, s.ApplicationID()), rt: rt}
}

// recorder notes the Authorization header of every request by route.
type recorder struct {
	next http.RoundTripper
	mu   sync.Mutex
	auth map[string]string
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	if r.auth == nil {
		r.auth = map[string]string{}
	}
	route := transport.ParseRoute(req.Method, strings.TrimPrefix(req.URL.Path, "/api/v10"), "")
	r.auth[route.Method+" "+strings.Split(route.Template, "/")[1]] = req.Header.Get("Authorization")
	r.mu.Unlock()
	return r.next.RoundTrip(req)
}

// A non-2xx answer is a typed error with Discord's code, message and the
// class the job layer acts on.
func TestErrorsAreTyped(t *testing.T) {
	t.Parallel()
	w := newWorld(t, sim.DefaultFixture())
	_, err := w.c.Message(t.Context(), w.g.Channel("general"), "1")
	var api *transport.APIError
	if !errors.As(err, &api) || api.Status != 404 || api.Code != 10008 || api.Class() != transport.NotFound {
		t.Fatalf("unknown message: %v", err)
	}
	err = w.c.AddMemberRole(t.Context(), w.g.ID, w.g.Member("bob"), w.g.Role("Moderator"), "")
	if c, _ := transport.Classify(err); c != transport.Permission {
		t.Errorf("a role above the bot's: %v (class %s), want permission", err, c)
	}
	_, err = w.c.CreateMessage(t.Context(), w.g.Channel("general"), rest.NewMessage{})
	if !errors.As(err, &api) || api.Code != 50006 || api.Class() != transport.Invalid {
		t.Errorf("an empty message: %v, want 50006 invalid", err)
	}
}

// Calls authenticated by a webhook or interaction token do not carry the
// bot token, and no error ever shows a token.
func TestTokensStayOutOfErrorsAndTokenCalls(t *testing.T) {
	t.Parallel()
	w := newWorld(t, sim.DefaultFixture())
	const token = "not-a-real-webhook-token-xyz"
	_, err := w.c.ExecuteWebhook(t.Context(), "123", token, rest.WebhookMessage{Content: "hi"}, rest.ExecuteOptions{Wait: true})
	if err == nil || strings.Contains(err.Error(), token) {
		t.Fatalf("execute on an unknown webhook: %v", err)
	}
	if _, err := w.c.Roles(t.Context(), w.g.ID); err != nil {
		t.Fatal(err)
	}
	w.rt.mu.Lock()
	defer w.rt.mu.Unlock()
	if got := w.rt.auth["POST webhooks"]; got != "" {
		t.Errorf("a webhook call sent Authorization %q", got)
	}
	if got := w.rt.auth["GET guilds"]; got != "Bot "+simtest.Token {
		t.Errorf("a bot call sent Authorization %q", got)
	}
}

// Moderation calls carry their reason to the audit log, URL-encoded, cut
// to Discord's 512 characters.
func TestAuditLogReason(t *testing.T) {
	t.Parallel()
	w := newWorld(t, sim.DefaultFixture())
	reason := "ticket #7 opened by bob: « accès » " + strings.Repeat("x", 600)
	if err := w.c.AddMemberRole(t.Context(), w.g.ID, w.g.Member("bob"), w.g.Role("Art"), reason); err != nil {
		t.Fatal(err)
	}
	want := string([]rune(reason)[:512])
	for _, r := range w.s.Requests() {
		if r.Method == "PUT" && strings.Contains(r.Route, "/roles/") {
			if r.AuditLogReason != want {
				t.Errorf("audit log reason = %q, want %q", r.AuditLogReason, want)
			}
			return
		}
	}
	t.Error("the role change never reached the simulator")
}
