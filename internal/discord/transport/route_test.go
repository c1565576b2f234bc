package transport

import "testing"

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
		{"POST", "/webhooks/44/secret", Route{Method: "POST", Template: "/webhooks/{webhook_id}/{webhook_token}", Major: "44/secret", Webhook: "44", Exempt: true}},
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
