package transport

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

func TestParseRoute(t *testing.T) {
	t.Parallel()
	const app = "900000000000000001"
	tests := []struct {
		method, path string
		want         Route
	}{
		{"POST", "/channels/111111111111111111/messages", Route{Method: "POST", Template: "/channels/{channel_id}/messages", Major: "111111111111111111"}},
		{"PATCH", "/channels/111/messages/222", Route{Method: "PATCH", Template: "/channels/{channel_id}/messages/{message_id}", Major: "111"}},
		{"PUT", "/guilds/5/members/6/roles/7", Route{Method: "PUT", Template: "/guilds/{guild_id}/members/{user_id}/roles/{role_id}", Major: "5"}},
		{"PUT", "/channels/1/messages/2/reactions/%F0%9F%91%8D/@me", Route{Method: "PUT", Template: "/channels/{channel_id}/messages/{message_id}/reactions/{emoji}/@me", Major: "1"}},
		{"POST", "/interactions/333/tok-en/callback", Route{Method: "POST", Template: "/interactions/{interaction_id}/{interaction_token}/callback", Major: "tok-en", Exempt: true}},
		{"POST", "/webhooks/" + app + "/itok", Route{Method: "POST", Template: "/webhooks/{application_id}/{interaction_token}", Major: "itok", Exempt: true}},
		{"PATCH", "/webhooks/" + app + "/itok/messages/@original", Route{Method: "PATCH", Template: "/webhooks/{application_id}/{interaction_token}/messages/@original", Major: "itok", Exempt: true}},
		{"POST", "/webhooks/44/secret", Route{Method: "POST", Template: "/webhooks/{webhook_id}/{webhook_token}", Major: "44/secret", Webhook: "44"}},
		// Counted on the caller's IP's global limit, so on the bot's here.
		{"GET", "/webhooks/44/secret", Route{Method: "GET", Template: "/webhooks/{webhook_id}/{webhook_token}", Major: "44/secret", Webhook: "44"}},
		{"GET", "/webhooks/44", Route{Method: "GET", Template: "/webhooks/{webhook_id}", Major: "44", Webhook: "44"}},
		{"GET", "/gateway/bot", Route{Method: "GET", Template: "/gateway/bot"}},
		{"GET", "/users/@me", Route{Method: "GET", Template: "/users/@me"}},
		{"PUT", "/applications/" + app + "/guilds/5/commands", Route{Method: "PUT", Template: "/applications/{application_id}/guilds/{guild_id}/commands"}},
	}
	for _, tc := range tests {
		got := ParseRoute(tc.method, tc.path, app)
		if got != tc.want {
			t.Errorf("ParseRoute(%s %s)\n got %+v\nwant %+v", tc.method, tc.path, got, tc.want)
		}
	}
}

// Keys reach logs and metrics: they must hold neither ids nor tokens.
func TestRouteKeyHasNoSecrets(t *testing.T) {
	t.Parallel()
	r := ParseRoute("POST", "/webhooks/44/very-secret-token", "1")
	if k := r.Key(); k != "POST /webhooks/{webhook_id}/{webhook_token}" {
		t.Errorf("key = %q", k)
	}
}

// A token in the path authenticates webhook and interaction routes: their
// 401 never condemns the bot token.
func TestRouteTokenAuth(t *testing.T) {
	t.Parallel()
	for path, want := range map[string]bool{
		"/webhooks/44/tok":                      true,
		"/webhooks/44/tok/messages/5":           true,
		"/webhooks/900/itok":                    true,
		"/webhooks/900/itok/messages/@original": true,
		"/interactions/1/itok/callback":         true,
		"/webhooks/44":                          false,
		"/channels/1/webhooks":                  false,
		"/users/@me":                            false,
	} {
		if got := ParseRoute("POST", path, "900").TokenAuth(); got != want {
			t.Errorf("%s: TokenAuth = %v, want %v", path, got, want)
		}
	}
}

// A proxy caller chooses the path: no text of it may reach a route key
// (bucket names, metric labels, log fields). An encoded slash stays inside
// its segment, as Discord reads the path, and a word Discord's paths do
// not have becomes a parameter.
func TestParseRouteTakesNoPathText(t *testing.T) {
	t.Parallel()
	for path, want := range map[string]string{
		"/webhooks/44/tok%2FINJECTED_label":       "POST /webhooks/{webhook_id}/{webhook_token}",
		"/webhooks/44/tok/INJECTED_label":         "POST /webhooks/{webhook_id}/{webhook_token}/{segment}",
		"/channels/1/messages/INJECTED":           "POST /channels/{channel_id}/messages/{segment}",
		"/channels/1/%3Cscript%3E":                "POST /channels/{channel_id}/{segment}",
		"/INJECTED/label":                         "POST /{segment}/{segment}",
		"/webhooks/44/tok/messages/@original%2Fx": "POST /webhooks/{webhook_id}/{webhook_token}/messages/{segment}",
	} {
		if got := ParseRoute("POST", path, "1").Key(); got != want {
			t.Errorf("%s → %q, want %q", path, got, want)
		}
	}
}

// Every word of Discord's REST paths is known, so no route of Discord's
// loses its name (checked against the OpenAPI spec when
// HERALD_DISCORD_SPEC names it).
func TestKnownSegmentsCoverDiscordsPaths(t *testing.T) {
	t.Parallel()
	file := os.Getenv("HERALD_DISCORD_SPEC")
	if file == "" {
		t.Skip("HERALD_DISCORD_SPEC is not set")
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for p := range doc.Paths {
		for _, seg := range strings.Split(strings.Trim(p, "/"), "/") {
			if !strings.HasPrefix(seg, "{") && !knownSegments[seg] {
				t.Errorf("%s: %q is not a known segment", p, seg)
			}
		}
	}
}
