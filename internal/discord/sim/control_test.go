package sim_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/discord/simtest"
)

func keys(m map[string]any) string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return strings.Join(out, ",")
}

func rawControl(t *testing.T, method, url, body string, want int) []byte {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	resp, err := raw.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("%s %s = %d %s, want %d", method, url, resp.StatusCode, b, want)
	}
	return b
}

func TestControlAPIContract(t *testing.T) {
	t.Parallel()
	s := simtest.New(t, simtest.WithFakeClock())
	created := rawControl(t, "POST", s.URL+"/_sim/guilds", `{
		"name": "Contract",
		"roles": [{"name": "Mod", "permissions": "8192", "position": 3}, {"name": "Blue", "permissions": "0", "position": 1}],
		"channels": [{"name": "Help", "type": 4}, {"name": "desk", "type": 0, "parent": "Help"}],
		"members": [{"username": "zoe", "roles": ["Blue"]}]
	}`, 201)
	var g map[string]any
	json.Unmarshal(created, &g)
	if got := keys(g); got != "application_id,bot_role_id,bot_user_id,channels,id,members,roles" {
		t.Fatalf("guild keys %s", got)
	}
	for field, want := range map[string]string{"roles": "id,name", "channels": "id,name", "members": "id,username"} {
		list := g[field].([]any)
		if len(list) == 0 {
			t.Fatalf("%s empty", field)
		}
		for _, item := range list {
			if got := keys(item.(map[string]any)); got != want {
				t.Fatalf("%s item keys %s, want %s", field, got, want)
			}
		}
	}
	channels := g["channels"].([]any)
	desk := channels[1].(map[string]any)["id"].(string)
	zoe := g["members"].([]any)[0].(map[string]any)["id"].(string)
	guildID := g["id"].(string)

	snap := rawControl(t, "GET", s.URL+"/_sim/guilds/"+guildID, "", 200)
	var gs map[string]any
	json.Unmarshal(snap, &gs)
	for _, k := range []string{"roles", "members", "channels", "threads"} {
		if _, ok := gs[k]; !ok {
			t.Fatalf("guild snapshot lacks %s: %s", k, snap)
		}
	}

	in := rawControl(t, "POST", s.URL+"/_sim/interactions", `{"guild_id":"`+guildID+`","channel_id":"`+desk+`","user_id":"`+zoe+`","kind":"command","name":"ticket","options":[{"name":"topic","type":3,"value":"billing"}]}`, 201)
	var ic map[string]any
	json.Unmarshal(in, &ic)
	if got := keys(ic); got != "id,token" {
		t.Fatalf("interaction keys %s", got)
	}
	status := rawControl(t, "GET", s.URL+"/_sim/interactions/"+ic["id"].(string), "", 200)
	var st map[string]any
	json.Unmarshal(status, &st)
	if got := keys(st); got != "ack_latency_ms,ack_type,acked,followups" {
		t.Fatalf("interaction status keys %s", got)
	}
	if st["acked"] != false || st["followups"] != float64(0) {
		t.Fatalf("status %s", status)
	}
	wantStatus(t, s.DoAs("POST", "/interactions/"+ic["id"].(string)+"/"+ic["token"].(string)+"/callback", "", map[string]any{"type": 5}), 204)
	json.Unmarshal(rawControl(t, "GET", s.URL+"/_sim/interactions/"+ic["id"].(string), "", 200), &st)
	if st["acked"] != true || st["ack_type"] != float64(5) || st["ack_latency_ms"] != float64(0) {
		t.Fatalf("acked status %v", st)
	}

	var reqs []map[string]any
	json.Unmarshal(rawControl(t, "GET", s.URL+"/_sim/requests", "", 200), &reqs)
	if len(reqs) != 1 || keys(reqs[0]) != "bucket,latency_ms,method,path,route,scope,status,time,user_agent" {
		t.Fatalf("requests %v", reqs)
	}
	if reqs[0]["route"] != "/interactions/{interaction_id}/{interaction_token}/callback" || strings.Contains(reqs[0]["path"].(string), ic["token"].(string)) {
		t.Fatalf("request record %v leaks the token or misses the route", reqs[0])
	}
	var stats map[string]any
	json.Unmarshal(rawControl(t, "GET", s.URL+"/_sim/stats", "", 200), &stats)
	for _, k := range []string{"requests", "by_status", "rate_limited", "invalid_requests", "refused_user_agent", "ack_latencies_ms"} {
		if _, ok := stats[k]; !ok {
			t.Fatalf("stats lacks %s", k)
		}
	}

	joined := rawControl(t, "POST", s.URL+"/_sim/guilds/"+guildID+"/members", `{"username":"yuki","roles":["Mod"]}`, 201)
	var jm map[string]any
	json.Unmarshal(joined, &jm)
	if keys(jm) != "id,username" || jm["username"] != "yuki" {
		t.Fatalf("member add %s", joined)
	}
	rawControl(t, "POST", s.URL+"/_sim/guilds/"+guildID+"/members", `{"username":"x","roles":["@everyone"]}`, 400)
	// The owner's hand: any role but @everyone and managed ones, to anyone
	// (the bot too).
	mod := g["roles"].([]any)[0].(map[string]any)["id"].(string)
	botRoles := s.URL + "/_sim/guilds/" + guildID + "/members/" + g["bot_user_id"].(string) + "/roles/"
	rawControl(t, "PUT", botRoles+mod, "", 204)
	withMod, _ := s.Server.Guild(guildID)
	if !slices.ContainsFunc(withMod.Members, func(m sim.SnapshotMember) bool { return m.ID == g["bot_user_id"] && slices.Contains(m.Roles, mod) }) {
		t.Fatal("the bot did not get Mod")
	}
	rawControl(t, "PUT", botRoles+g["bot_role_id"].(string), "", 404)
	rawControl(t, "PUT", botRoles+guildID, "", 404)
	rawControl(t, "DELETE", botRoles+mod, "", 204)
	rawControl(t, "DELETE", s.URL+"/_sim/guilds/"+guildID+"/members/"+jm["id"].(string), "", 204)
	rawControl(t, "DELETE", s.URL+"/_sim/guilds/"+guildID+"/members/"+jm["id"].(string), "", 404)

	rawControl(t, "POST", s.URL+"/_sim/faults", `{"route":"GET /users/@me","status":502,"count":1}`, 204)
	rawControl(t, "POST", s.URL+"/_sim/faults", `{"route":"GET /nowhere","status":502,"count":1}`, 400)
	rawControl(t, "POST", s.URL+"/_sim/limits", `{"route":"GET /users/@me","limit":1,"window_ms":1000}`, 204)
	rawControl(t, "POST", s.URL+"/_sim/guilds", `{"name":"x","members":[{"username":"a","roles":["nope"]}]}`, 400)
	rawControl(t, "POST", s.URL+"/_sim/interactions", `{"guild_id":"1","kind":"command"}`, 400)
	rawControl(t, "POST", s.URL+"/_sim/reset", "", 204)
	rawControl(t, "GET", s.URL+"/_sim/guilds/"+guildID, "", 404)
	if st := s.Stats(); st.Requests != 0 {
		t.Fatalf("reset kept %d requests", st.Requests)
	}
}

func TestTokenOption(t *testing.T) {
	t.Parallel()
	s := simtest.New(t, simtest.WithOptions(sim.Options{Token: "T"}))
	wantStatus(t, s.DoAs("GET", "/users/@me", "T", nil), 200)
	wantError(t, s.DoAs("GET", "/users/@me", "other", nil), 401, 0)
	wantError(t, s.DoInvalidAs("GET", "/users/@me", "", nil), 401, 0)
	// Both API versions are served.
	resp, err := s.Client.Get("https://discord.com/api/v9/users/@me")
	if err != nil || resp.StatusCode != 401 {
		t.Fatalf("v9 without token: %v %v", resp, err)
	}
	resp.Body.Close()
	// GET /gateway needs no token; /gateway/bot does.
	gw := s.DoAs("GET", "/gateway", "", nil)
	wantStatus(t, gw, 200)
	var url struct{ URL string }
	gw.JSON(t, &url)
	if !strings.HasPrefix(url.URL, "ws://") || !strings.HasSuffix(url.URL, "/gateway-ws") {
		t.Fatalf("gateway url %q", url.URL)
	}
	wantStatus(t, s.DoInvalidAs("GET", "/gateway/bot", "", nil), 401)
	wantStatus(t, s.DoAs("GET", "/gateway/bot", "T", nil), 200)
}

// A token reset makes the old token a 401 and the new one work, and ends
// gateway sessions with 4004 (checked through discordgo, which stops).
func TestResetToken(t *testing.T) {
	t.Parallel()
	s := simtest.New(t, simtest.WithOptions(sim.Options{Token: simtest.Token}))
	dg := s.Session()
	closed := make(chan struct{})
	dg.AddHandler(func(*discordgo.Session, *discordgo.Disconnect) {
		select {
		case <-closed:
		default:
			close(closed)
		}
	})
	if err := dg.Open(); err != nil {
		t.Fatal(err)
	}
	defer dg.Close()
	s.ResetToken("new-token")
	wantError(t, s.DoAs("GET", "/users/@me", simtest.Token, nil), 401, 0)
	wantStatus(t, s.DoAs("GET", "/users/@me", "new-token", nil), 200)
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("the gateway session outlived the token reset")
	}
	bad := httptest.NewRecorder()
	s.Server.ServeHTTP(bad, httptest.NewRequest("POST", "/_sim/token", strings.NewReader(`{"token": ""}`)))
	if bad.Code != 400 {
		t.Errorf("empty token = %d, want 400", bad.Code)
	}
}

func TestUnknownRoutes(t *testing.T) {
	t.Parallel()
	// Paths outside Discord's spec, so served without the harness.
	srv := sim.New(sim.Options{})
	t.Cleanup(srv.Close)
	for _, tt := range []struct {
		method, path string
		status       int
		message      string
	}{
		{"GET", "/api/v10/nowhere", 404, "404: Not Found"},
		{"DELETE", "/api/v10/users/@me", 405, "405: Method Not Allowed"},
		{"GET", "/api/v8/users/@me", 404, "404: Not Found"},
	} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(tt.method, tt.path, nil)
		req.Header.Set("Authorization", "Bot x")
		req.Header.Set("User-Agent", simtest.UserAgent)
		srv.ServeHTTP(rec, req)
		var e errorBody
		json.Unmarshal(rec.Body.Bytes(), &e)
		if rec.Code != tt.status || e.Code != 0 || e.Message != tt.message {
			t.Errorf("%s %s = %d %s", tt.method, tt.path, rec.Code, rec.Body)
		}
	}
}
