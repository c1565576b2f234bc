package main

import (
	"net/url"
	"strings"
	"testing"

	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/discord/simtest"
)

// herald's features need exactly these permissions: Manage Channels, View
// Channels, Send Messages, Embed Links, Attach Files, Read Message
// History, Manage Roles, Manage Threads, Create Private Threads and Send
// Messages in Threads.
const invitePermissions = "361045806096"

// invite checks the token, prints the OAuth2 URL with both scopes and the
// exact permission integer, and says which privileged intents are off and
// what they turn off.
func TestInvite(t *testing.T) {
	t.Parallel()
	s := simtest.New(t, simtest.WithOptions(sim.Options{Token: simtest.Token}))
	vars := map[string]string{"DISCORD_TOKEN": simtest.Token, "HERALD_DISCORD_API": s.URL + "/api/v10"}
	r := herald(t, vars, "invite")
	if r.code != 0 {
		t.Fatalf("invite = %d\n%s", r.code, r.stderr)
	}
	u := inviteURL(t, r.stdout)
	if q := u.Query(); u.Host != "discord.com" || u.Path != "/oauth2/authorize" || q.Get("client_id") != s.ApplicationID() ||
		q.Get("scope") != "bot applications.commands" || q.Get("permissions") != invitePermissions {
		t.Fatalf("invite URL %s", u)
	}
	for _, want := range []string{"Server Members Intent", "OFF", "closing a ticket when its opener leaves", "Message Content Intent",
		"Manage Threads", "Create Private Threads", "(" + invitePermissions + ")"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("invite does not say %q:\n%s", want, r.stdout)
		}
	}

	s.SetApplicationFlags(simtest.PortalIntents)
	r = herald(t, vars, "invite", "--mention-everyone")
	if strings.Contains(r.stdout, "OFF") || inviteURL(t, r.stdout).Query().Get("permissions") != "361045937168" {
		t.Fatalf("with the intents on and --mention-everyone:\n%s", r.stdout)
	}

	vars["DISCORD_TOKEN"] = "a-reset-token"
	if r := herald(t, vars, "invite"); r.code != 78 || !strings.Contains(r.stderr, "Reset Token") {
		t.Fatalf("invite with a rejected token = %d\n%s", r.code, r.stderr)
	}
}

func inviteURL(t *testing.T, out string) *url.URL {
	t.Helper()
	for _, f := range strings.Fields(out) {
		if strings.HasPrefix(f, "https://discord.com/oauth2/") {
			u, err := url.Parse(f)
			if err != nil {
				t.Fatal(err)
			}
			return u
		}
	}
	t.Fatalf("no invite URL in:\n%s", out)
	return nil
}
