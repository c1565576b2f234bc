package app

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/discord/simtest"
)

// HERALD_INTERACTIONS_ADDR is checked with the rest of the configuration,
// and herald takes the application's verify_key from Discord: the
// endpoint it then serves passes the checks Discord makes when the URL is
// saved (a signed PING answered PONG, a forged one 401).
func TestInteractionsEndpointSetting(t *testing.T) {
	t.Parallel()
	if _, err := LoadConfig(func(k string) (string, bool) {
		return map[string]string{"DISCORD_TOKEN": "t", "DATABASE_URL": "postgres://x/y", "HERALD_INTERACTIONS_ADDR": "8082"}[k], true
	}); err == nil || !strings.Contains(err.Error(), "HERALD_INTERACTIONS_ADDR") {
		t.Errorf("a port without a colon: %v", err)
	}
	s := simtest.New(t)
	s.CreateGuild(sim.DefaultFixture())
	a, err := New(t.Context(), configFor(t, s, map[string]string{"HERALD_INTERACTIONS_ADDR": "127.0.0.1:0"}), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer a.close()
	if a.application.VerifyKey == "" || a.InteractionsAddr() == "" {
		t.Fatalf("verify_key %q, endpoint %q", a.application.VerifyKey, a.InteractionsAddr())
	}
	errs := make(chan error, 1)
	a.serveInteractions(errs)
	defer a.stopInteractions()
	s.SetInteractionsEndpoint("http://" + a.InteractionsAddr())
}
