package app

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/herald-bot/herald/internal/config"
	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/discord/simtest"
	"github.com/herald-bot/herald/internal/store/storetest"
	"github.com/herald-bot/herald/internal/testsupport/logbuf"
	"github.com/herald-bot/herald/internal/testsupport/wait"
)

// configFor points herald at s with env over the defaults.
func configFor(t *testing.T, s *simtest.Sim, env map[string]string) config.Config {
	t.Helper()
	vars := map[string]string{"DISCORD_TOKEN": simtest.Token, "DATABASE_URL": storetest.URL(t),
		"HERALD_DISCORD_API": s.URL + "/api/v10", "HERALD_HTTP_ADDR": "127.0.0.1:0", "HERALD_SHUTDOWN_TIMEOUT": "2s"}
	for k, v := range env {
		vars[k] = v
	}
	cfg, err := LoadConfig(func(k string) (string, bool) { v, ok := vars[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// herald takes its application's id and its bot user's id from Discord:
// on an older application they differ, and DISCORD_APP_ID is not needed.
func TestApplicationReadFromDiscord(t *testing.T) {
	t.Parallel()
	s := simtest.New(t)
	s.CreateGuild(sim.DefaultFixture())
	a, err := New(t.Context(), configFor(t, s, nil), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer a.close()
	if a.application.ID != s.ApplicationID() || a.application.BotUserID != s.BotUserID() || a.discord.ApplicationID() != s.ApplicationID() {
		t.Fatalf("application %+v, client's id %s; want app %s, bot user %s", a.application, a.discord.ApplicationID(), s.ApplicationID(), s.BotUserID())
	}
}

// A token Discord refuses, or a DISCORD_APP_ID naming another
// application, is a FatalError that says what to do: `herald run` exits
// once with ExitFatal instead of restarting in a loop.
func TestFatalStartErrors(t *testing.T) {
	t.Parallel()
	s := simtest.New(t, simtest.WithOptions(sim.Options{Token: simtest.Token}))
	for name, tc := range map[string]struct {
		env  map[string]string
		want string
	}{
		"rejected token": {map[string]string{"DISCORD_TOKEN": "a-reset-token"}, "Reset Token"},
		"another app":    {map[string]string{"DISCORD_APP_ID": "1234"}, "unset DISCORD_APP_ID"},
	} {
		t.Run(name, func(t *testing.T) {
			var logs logbuf.Buffer
			_, err := New(t.Context(), configFor(t, s, tc.env), slog.New(slog.NewTextHandler(&logs, nil)))
			var fatal *FatalError
			if !errors.As(err, &fatal) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New = %v, want a FatalError saying %q", err, tc.want)
			}
			if strings.Contains(err.Error()+logs.String(), "a-reset-token") {
				t.Fatal("the token reached an error or a log")
			}
		})
	}
}

// On an application without privileged intents herald starts, and its
// log names each missing intent, what it turns off and where to switch it
// on.
func TestMissingIntentsWarned(t *testing.T) {
	t.Parallel()
	s := simtest.New(t) // a new application: no privileged intent
	s.CreateGuild(sim.DefaultFixture())
	var logs logbuf.Buffer
	a, err := New(t.Context(), configFor(t, s, nil), slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer a.close()
	out := logs.String()
	for _, want := range []string{"Server Members Intent", "closing a ticket when its opener leaves", "listing members for `/roles bulk`",
		"Message Content Intent", "members' messages in transcripts", "Privileged Gateway Intents"} {
		if !strings.Contains(out, want) {
			t.Errorf("the log does not say %q:\n%s", want, out)
		}
	}
	if len(a.missing) != 4 {
		t.Errorf("missing needs %v, want 4", a.missing)
	}
}

// A running herald whose gateway session Discord ends with a fatal code
// stops with a FatalError naming the fix (exit status 78), instead of
// reconnecting forever.
func TestFatalGatewayCloseStopsRun(t *testing.T) {
	t.Parallel()
	s := simtest.New(t)
	s.SetApplicationFlags(simtest.PortalIntents)
	s.CreateGuild(sim.DefaultFixture())
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	a, err := New(ctx, configFor(t, s, nil), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	wait.Until(t, "gateway ready", func() bool { gw := a.sessions.get(0); return gw != nil && gw.Ready() == nil })
	s.SetFault(sim.Fault{Gateway: "disconnect", CloseCode: 4014})
	select {
	case err := <-done:
		var fatal *FatalError
		if !errors.As(err, &fatal) || !strings.Contains(fatal.Fix, "Privileged Gateway Intents") {
			t.Fatalf("Run = %v, want a FatalError with the portal's fix", err)
		}
	case <-time.After(wait.Timeout):
		t.Fatal("herald kept running after a fatal gateway close")
	}
}
