package sim_test

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/discord/simtest"
)

// rawGet sends GET /api/v10+path as the bot with the given User-Agent
// ("" sends Go's default), bypassing the harness's client, which adds a
// valid one.
func rawGet(t *testing.T, w *world, path, agent string) (int, errorBody) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, w.URL+"/api/v10"+path, nil)
	req.Header.Set("Authorization", "Bot "+simtest.Token)
	if agent != "" {
		req.Header.Set("User-Agent", agent)
	}
	res, err := raw.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	var e errorBody
	json.Unmarshal(b, &e)
	return res.StatusCode, e
}

// Discord requires "User-Agent: DiscordBot ($url, $versionNumber)" on
// every REST request, and requests without a valid one "may be blocked and
// return a Cloudflare error" (Discord's reference, "HTTP API: User
// Agent"). The block is 403 with JSON code 40333, "Cloudflare is blocking
// your request. This can often be resolved by setting a proper User
// Agent" (Opcodes and Status Codes, JSON error codes), message "internal
// network error" (discord/discord-api-docs#6473). Every 403 counts toward
// the 10,000 invalid requests per 10 minutes that get a client banned
// (Rate Limits, "Invalid Request Limit aka Cloudflare bans"). The control
// API and the gateway are no part of Discord's REST API.
func TestUserAgentRequired(t *testing.T) {
	w := newWorld(t)
	w.SetLimits(sim.LimitChange{InvalidRequestLimit: 3})
	if status, e := rawGet(t, w, "/users/@me", "DiscordBot (https://example.com, 1.0) extra/2"); status != http.StatusOK {
		t.Fatalf("a valid agent with more appended: %d %+v", status, e)
	}
	w.gateway(t, allTestIntents) // the gateway does not ask
	for _, agent := range []string{"", "Mozilla/5.0 (X11; Linux x86_64) Chrome/120.0", "DiscordBot"} {
		status, e := rawGet(t, w, "/users/@me", agent)
		if status != http.StatusForbidden || e.Code != 40333 || e.Message != "internal network error" {
			t.Errorf("User-Agent %q: %d %+v, want 403 code 40333", agent, status, e)
		}
	}
	if st := w.Stats(); st.RefusedUserAgent != 3 || st.InvalidRequests != 3 || !st.Blocked {
		t.Fatalf("stats %+v: want 3 refused, counted as invalid, and the client banned", st)
	}
	if status, _ := rawGet(t, w, "/users/@me", "DiscordBot (https://example.com, 1.0)"); status != http.StatusTooManyRequests {
		t.Fatalf("a banned client with a valid agent got %d, want the ban's 429", status)
	}
}
