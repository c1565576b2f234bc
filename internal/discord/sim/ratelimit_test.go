package sim_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/discord/simtest"
)

type rateLimitBody struct {
	Message    string  `json:"message"`
	RetryAfter float64 `json:"retry_after"`
	Global     bool    `json:"global"`
	Code       *int    `json:"code"`
}

func TestBucketHeadersAndUserScope429(t *testing.T) {
	w := newWorld(t)
	general := w.g.Channel("general")
	msg := map[string]any{"content": "hi"}
	var bucket string
	for i := range 5 {
		r := w.Do("POST", "/channels/"+general+"/messages", msg)
		wantStatus(t, r, 200)
		h := r.Header
		if h.Get("X-RateLimit-Limit") != "5" || h.Get("X-RateLimit-Remaining") != string(rune('4'-i)) {
			t.Fatalf("request %d: limit %q remaining %q", i, h.Get("X-RateLimit-Limit"), h.Get("X-RateLimit-Remaining"))
		}
		if h.Get("X-RateLimit-Reset-After") != "5.000" {
			t.Fatalf("reset-after %q, want 5.000 on a fake clock that does not move", h.Get("X-RateLimit-Reset-After"))
		}
		wantReset := float64(w.Clock.Now().Add(5*time.Second).UnixMilli()) / 1000
		var reset float64
		json.Unmarshal([]byte(h.Get("X-RateLimit-Reset")), &reset)
		if reset != wantReset {
			t.Fatalf("reset %v, want %v", reset, wantReset)
		}
		if i == 0 {
			bucket = h.Get("X-RateLimit-Bucket")
		}
		if h.Get("X-RateLimit-Bucket") != bucket || bucket == "" {
			t.Fatalf("bucket %q changed from %q", h.Get("X-RateLimit-Bucket"), bucket)
		}
		if h.Get("X-RateLimit-Scope") != "" {
			t.Fatal("scope header on a 200")
		}
	}
	w.Clock.Advance(1200 * time.Millisecond)
	r := w.Do("POST", "/channels/"+general+"/messages", msg)
	wantStatus(t, r, 429)
	var body rateLimitBody
	r.JSON(t, &body)
	// Discord's 429 body carries the JSON error code, 0 for route limits.
	if body.Message != "You are being rate limited." || body.RetryAfter != 3.8 || body.Global || body.Code == nil || *body.Code != 0 {
		t.Fatalf("429 body %s", r.Body)
	}
	h := r.Header
	if h.Get("X-RateLimit-Scope") != "user" || h.Get("Retry-After") != "4" || h.Get("X-RateLimit-Global") != "" {
		t.Fatalf("429 headers %v", h)
	}
	if h.Get("X-RateLimit-Remaining") != "0" || h.Get("X-RateLimit-Bucket") != bucket || h.Get("X-RateLimit-Reset-After") != "3.800" {
		t.Fatalf("429 bucket headers %v", h)
	}

	// Another channel is another bucket with the same hash.
	other := w.Do("POST", "/channels/"+w.g.Channel("roles")+"/messages", msg)
	wantStatus(t, other, 200)
	if other.Header.Get("X-RateLimit-Bucket") != bucket || other.Header.Get("X-RateLimit-Remaining") != "4" {
		t.Fatalf("other channel headers %v", other.Header)
	}

	w.Clock.Advance(3800 * time.Millisecond)
	wantStatus(t, w.Do("POST", "/channels/"+general+"/messages", msg), 200)
	if n := len(w.Messages(general)); n != 6 {
		t.Fatalf("%d messages, want 6 (the 429 created none)", n)
	}
}

func TestRetryAfterRoundsUp(t *testing.T) {
	tests := []struct {
		windowMS   int64
		advance    time.Duration
		retryAfter float64
		header     string
	}{
		{1500, 0, 1.5, "2"},
		{1500, 1400 * time.Millisecond, 0.1, "1"},
		{3000, 1000 * time.Millisecond, 2, "2"},
		{250, 0, 0.25, "1"},
	}
	for _, tt := range tests {
		t.Run("", func(t *testing.T) {
			w := newWorld(t)
			w.SetLimits(sim.LimitChange{Route: "POST /channels/{channel_id}/messages", Limit: 1, WindowMS: tt.windowMS})
			ch := w.g.Channel("general")
			w.post(t, ch, map[string]any{"content": "a"})
			w.Clock.Advance(tt.advance)
			r := w.Do("POST", "/channels/"+ch+"/messages", map[string]any{"content": "b"})
			wantStatus(t, r, 429)
			var body rateLimitBody
			r.JSON(t, &body)
			if body.RetryAfter != tt.retryAfter || r.Header.Get("Retry-After") != tt.header {
				t.Fatalf("retry_after %v Retry-After %q, want %v %q", body.RetryAfter, r.Header.Get("Retry-After"), tt.retryAfter, tt.header)
			}
		})
	}
}

func TestRoutesShareBucket(t *testing.T) {
	w := newWorld(t)
	w.SetLimits(sim.LimitChange{Route: "PUT /guilds/{guild_id}/members/{user_id}/roles/{role_id}", Limit: 2, WindowMS: 10000})
	path := "/guilds/" + w.g.ID + "/members/" + w.g.Member("dave") + "/roles/" + w.g.Role("News")
	add := w.Do("PUT", path, nil)
	wantStatus(t, add, 204)
	remove := w.Do("DELETE", path, nil)
	wantStatus(t, remove, 204)
	if add.Header.Get("X-RateLimit-Bucket") != remove.Header.Get("X-RateLimit-Bucket") {
		t.Fatal("member role add and remove have different bucket hashes")
	}
	if remove.Header.Get("X-RateLimit-Remaining") != "0" {
		t.Fatalf("remaining %q after add+remove of a shared 2-request bucket", remove.Header.Get("X-RateLimit-Remaining"))
	}
	r := w.Do("PUT", path, nil)
	wantStatus(t, r, 429)
	if r.Header.Get("X-RateLimit-Scope") != "user" {
		t.Fatalf("scope %q", r.Header.Get("X-RateLimit-Scope"))
	}
	// A route with its own bucket is unaffected.
	msg := w.Do("GET", "/guilds/"+w.g.ID+"/members/"+w.g.Member("dave"), nil)
	wantStatus(t, msg, 200)
	if msg.Header.Get("X-RateLimit-Bucket") == add.Header.Get("X-RateLimit-Bucket") {
		t.Fatal("member get shares the member-role bucket")
	}
}

func TestGlobalLimitAndInteractionExemption(t *testing.T) {
	w := newWorld(t)
	w.SetLimits(sim.LimitChange{Global: 3})
	in := w.Interact(sim.InteractionRequest{GuildID: w.g.ID, ChannelID: w.g.Channel("general"), UserID: w.g.Member("bob"), Kind: "command", Name: "ping"})
	for _, path := range []string{"/guilds/" + w.g.ID, "/guilds/" + w.g.ID + "/roles", "/channels/" + w.g.Channel("general")} {
		wantStatus(t, w.Do("GET", path, nil), 200)
	}
	r := w.Do("GET", "/users/@me", nil)
	wantStatus(t, r, 429)
	var body rateLimitBody
	r.JSON(t, &body)
	if !body.Global || body.RetryAfter != 1 || body.Message != "You are being rate limited." {
		t.Fatalf("global 429 body %s", r.Body)
	}
	h := r.Header
	if h.Get("X-RateLimit-Global") != "true" || h.Get("X-RateLimit-Scope") != "global" || h.Get("Retry-After") != "1" {
		t.Fatalf("global 429 headers %v", h)
	}
	for _, k := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "X-RateLimit-Reset-After", "X-RateLimit-Bucket"} {
		if h.Get(k) != "" {
			t.Fatalf("global 429 carries %s", k)
		}
	}
	// Interaction endpoints are exempt from the global limit.
	wantStatus(t, w.Do("POST", "/interactions/"+in.ID+"/"+in.Token+"/callback", map[string]any{"type": 5}), 204)
	wantStatus(t, w.DoAs("POST", "/webhooks/"+w.g.ApplicationID+"/"+in.Token, "", map[string]any{"content": "done"}), 200)
	w.Clock.Advance(time.Second)
	wantStatus(t, w.Do("GET", "/users/@me", nil), 200)
	if st := w.Stats(); st.RateLimited["global"] != 1 {
		t.Fatalf("stats %+v", st)
	}
	var scopes []string
	for _, rec := range w.Requests() {
		if rec.Status == 429 {
			scopes = append(scopes, rec.Route+" "+rec.Scope)
		}
	}
	if len(scopes) != 1 || scopes[0] != "/users/@me global" {
		t.Fatalf("429s in the request log: %v", scopes)
	}
}

// "If no authorization header is provided, then the [global] limit is
// applied to the IP address" (Rate Limits › Global Rate Limit): a
// webhook's token spends the caller IP's global limit, apart from the
// bot's, and interaction endpoints spend neither.
func TestWebhookTokensSpendTheIPsGlobalLimit(t *testing.T) {
	w := newWorld(t)
	in := w.Interact(sim.InteractionRequest{GuildID: w.g.ID, ChannelID: w.g.Channel("general"), UserID: w.g.Member("bob"), Kind: "command", Name: "ping"})
	var hook struct{ ID, Token string }
	w.Do("POST", "/channels/"+w.g.Channel("general")+"/webhooks", map[string]any{"name": "alerts"}).JSON(t, &hook)
	w.SetLimits(sim.LimitChange{Global: 3})
	w.Clock.Advance(time.Second)
	execute := func() *simtest.Response {
		return w.DoAs("POST", "/webhooks/"+hook.ID+"/"+hook.Token, "", map[string]any{"content": "n"})
	}
	for range 3 {
		wantStatus(t, execute(), 204)
	}
	r := execute()
	wantStatus(t, r, 429)
	if r.Header.Get("X-RateLimit-Scope") != "global" || r.Header.Get("X-RateLimit-Global") != "true" {
		t.Fatalf("the IP's fourth webhook request in a second: headers %v", r.Header)
	}
	wantStatus(t, w.Do("GET", "/users/@me", nil), 200) // the bot's own limit
	wantStatus(t, w.Do("POST", "/interactions/"+in.ID+"/"+in.Token+"/callback", map[string]any{"type": 5}), 204)
	wantStatus(t, w.DoAs("POST", "/webhooks/"+w.g.ApplicationID+"/"+in.Token, "", map[string]any{"content": "done"}), 200)
	w.Clock.Advance(time.Second)
	wantStatus(t, execute(), 204)
}

func TestSharedScopeWebhookChannelLimit(t *testing.T) {
	w := newWorld(t)
	ch := w.g.Channel("general")
	type hook struct{ ID, Token string }
	var hooks []hook
	for i := range 7 {
		if i == 5 {
			w.Clock.Advance(5 * time.Second) // webhook create is 5 per 5 s
		}
		r := w.Do("POST", "/channels/"+ch+"/webhooks", map[string]any{"name": "proxy"})
		wantStatus(t, r, 200)
		var h hook
		r.JSON(t, &h)
		hooks = append(hooks, h)
	}
	sent := 0
	for _, h := range hooks[:6] {
		for range 5 {
			wantStatus(t, w.DoAs("POST", "/webhooks/"+h.ID+"/"+h.Token, "", map[string]any{"content": "n"}), 204)
			sent++
		}
	}
	r := w.DoAs("POST", "/webhooks/"+hooks[6].ID+"/"+hooks[6].Token, "", map[string]any{"content": "n"})
	wantStatus(t, r, 429)
	if r.Header.Get("X-RateLimit-Scope") != "shared" || r.Header.Get("X-RateLimit-Bucket") == "" || r.Header.Get("Retry-After") != "60" {
		t.Fatalf("shared 429 headers %v", r.Header)
	}
	var body rateLimitBody
	r.JSON(t, &body)
	if body.Global || body.RetryAfter != 60 || body.Code == nil || *body.Code != 0 || body.Message != "The resource is being rate limited." {
		t.Fatalf("shared 429 body %s", r.Body)
	}
	st := w.Stats()
	if st.RateLimited["shared"] != 1 || st.InvalidRequests != 0 {
		t.Fatalf("a shared 429 must not count as invalid: %+v", st)
	}
	if n := len(w.Messages(ch)); n != sent {
		t.Fatalf("%d messages, want %d", n, sent)
	}
}

func TestInvalidRequestsBlockTheClient(t *testing.T) {
	w := newWorld(t, sim.Options{Token: "right", InvalidRequestLimit: 4, BlockDuration: time.Minute})
	for range 3 {
		wantError(t, w.DoAs("GET", "/users/@me", "wrong", nil), 401, 0)
	}
	// A shared-scope 429 would not count; a 403 does.
	wantError(t, w.DoAs("GET", "/guilds/"+w.g.ID+"/members/"+w.g.Member("dave"), "wrong", nil), 401, 0)
	r := w.DoAs("GET", "/users/@me", "right", nil)
	wantStatus(t, r, 429)
	for k := range r.Header {
		switch k {
		case "Content-Type", "Content-Length", "Date":
		default:
			t.Fatalf("blocked 429 carries header %s", k)
		}
	}
	var body rateLimitBody
	r.JSON(t, &body)
	if body.Code == nil || *body.Code != 0 {
		t.Fatalf("blocked body %s", r.Body)
	}
	// Webhooks are blocked too: Cloudflare bans the client, not a route.
	wantStatus(t, w.DoAs("POST", "/webhooks/1/x", "", map[string]any{"content": "x"}), 429)
	st := w.Stats()
	if !st.Blocked || st.InvalidRequests != 4 || st.RateLimited["blocked"] != 2 {
		t.Fatalf("stats %+v", st)
	}
	w.Clock.Advance(time.Minute)
	wantStatus(t, w.DoAs("GET", "/users/@me", "right", nil), 200)
}

func TestInvalidRequestWindowSlides(t *testing.T) {
	w := newWorld(t, sim.Options{Token: "right", InvalidRequestLimit: 3})
	wantStatus(t, w.DoAs("GET", "/users/@me", "wrong", nil), 401)
	wantStatus(t, w.DoAs("GET", "/users/@me", "wrong", nil), 401)
	w.Clock.Advance(10 * time.Minute)
	// The first two fell out of the 10-minute window.
	wantStatus(t, w.DoAs("GET", "/users/@me", "wrong", nil), 401)
	wantStatus(t, w.DoAs("GET", "/users/@me", "right", nil), 200)
}

func TestTimeScale(t *testing.T) {
	w := newWorld(t, sim.Options{TimeScale: 0.1})
	ch := w.g.Channel("general")
	for range 5 {
		r := w.Do("POST", "/channels/"+ch+"/messages", map[string]any{"content": "x"})
		wantStatus(t, r, 200)
		if r.Header.Get("X-RateLimit-Reset-After") != "0.500" {
			t.Fatalf("reset-after %q, want 0.500 at time scale 0.1", r.Header.Get("X-RateLimit-Reset-After"))
		}
	}
	r := w.Do("POST", "/channels/"+ch+"/messages", map[string]any{"content": "x"})
	wantStatus(t, r, 429)
	var body rateLimitBody
	r.JSON(t, &body)
	if body.RetryAfter != 0.5 || r.Header.Get("Retry-After") != "1" {
		t.Fatalf("scaled 429: %s %v", r.Body, r.Header)
	}
	w.Clock.Advance(500 * time.Millisecond)
	wantStatus(t, w.Do("POST", "/channels/"+ch+"/messages", map[string]any{"content": "x"}), 200)

	// The 3-second interaction deadline becomes 300 ms.
	in := w.Interact(sim.InteractionRequest{GuildID: w.g.ID, ChannelID: ch, UserID: w.g.Member("bob"), Kind: "command", Name: "ping"})
	w.Clock.Advance(301 * time.Millisecond)
	wantError(t, w.Do("POST", "/interactions/"+in.ID+"/"+in.Token+"/callback", map[string]any{"type": 5}), 404, 10062)
}
