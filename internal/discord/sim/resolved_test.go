package sim_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/herald-bot/herald/internal/discord/sim"
)

// interactionData delivers an interaction to a gateway session and
// returns its data.
func interactionData(t *testing.T, w *world, gw *gatewayClient, req sim.InteractionRequest) (sim.InteractionCreated, map[string]any) {
	t.Helper()
	req.GuildID, req.ChannelID = w.g.ID, w.g.Channel("general")
	if req.UserID == "" {
		req.UserID = w.g.Member("bob")
	}
	in := w.Interact(req)
	ev := gw.next("INTERACTION_CREATE")
	return in, ev["data"].(map[string]any)
}

func TestCommandResolvedData(t *testing.T) {
	w := newWorld(t)
	gw := w.gateway(t, allTestIntents)
	thread := jsonMap(t, w.Do("POST", "/channels/"+w.g.Channel("general")+"/threads", map[string]any{"name": "t", "type": 11}))["id"].(string)
	opts := []any{map[string]any{"name": "ticket", "type": 2, "options": []any{
		map[string]any{"name": "assign", "type": 1, "options": []any{
			map[string]any{"name": "member", "type": 6, "value": w.g.Member("carol")},
			map[string]any{"name": "channel", "type": 7, "value": thread},
			map[string]any{"name": "role", "type": 8, "value": w.g.Role("News")},
			map[string]any{"name": "who", "type": 9, "value": w.g.Role("Events")},
			map[string]any{"name": "log", "type": 11, "value": "log.txt"},
		}},
	}}}
	_, data := interactionData(t, w, gw, sim.InteractionRequest{Kind: "command", Name: "herald", Options: opts,
		Attachments: []sim.InteractionAttachment{{Filename: "log.txt", ContentType: "text/plain", Size: 42}}})
	res := data["resolved"].(map[string]any)
	member := res["members"].(map[string]any)[w.g.Member("carol")].(map[string]any)
	if _, hasUser := member["user"]; hasUser || member["permissions"] == nil {
		t.Fatalf("resolved member %v: want no user and permissions", member)
	}
	if res["users"].(map[string]any)[w.g.Member("carol")] == nil {
		t.Fatalf("resolved users %v", res["users"])
	}
	ch := res["channels"].(map[string]any)[thread].(map[string]any)
	if ch["permissions"] == nil || ch["thread_metadata"] == nil || ch["parent_id"] != w.g.Channel("general") {
		t.Fatalf("resolved thread %v", ch)
	}
	roles := res["roles"].(map[string]any)
	if roles[w.g.Role("News")] == nil || roles[w.g.Role("Events")] == nil {
		t.Fatalf("resolved roles %v", roles)
	}
	leaf := data["options"].([]any)[0].(map[string]any)["options"].([]any)[0].(map[string]any)["options"].([]any)[4].(map[string]any)
	att := res["attachments"].(map[string]any)[leaf["value"].(string)].(map[string]any)
	if att["filename"] != "log.txt" || att["size"] != 42.0 || att["content_type"] != "text/plain" {
		t.Fatalf("resolved attachment %v for option %v", att, leaf)
	}
	// The caller's options are left as they were.
	raw, _ := json.Marshal(opts)
	if !strings.Contains(string(raw), `"value":"log.txt"`) || strings.Contains(string(raw), "focused") {
		t.Fatalf("caller's options changed: %s", raw)
	}
}

func TestAutocompleteInteraction(t *testing.T) {
	w := newWorld(t)
	gw := w.gateway(t, allTestIntents)
	in, data := interactionData(t, w, gw, sim.InteractionRequest{Kind: "autocomplete", Name: "rolemenu", Focused: "menu",
		Options: []any{map[string]any{"name": "edit", "type": 1, "options": []any{
			map[string]any{"name": "menu", "type": 3, "value": "gam"},
			map[string]any{"name": "user", "type": 6, "value": w.g.Member("carol")},
		}}}})
	focused := data["options"].([]any)[0].(map[string]any)["options"].([]any)[0].(map[string]any)
	if focused["focused"] != true || data["resolved"] != nil {
		t.Fatalf("autocomplete data %v", data)
	}
	// Only choices answer an autocomplete interaction.
	wantError(t, w.Do("POST", callbackPath(in), map[string]any{"type": 4, "data": map[string]any{"content": "x"}}), 400, 50035)
	choices := make([]any, 26)
	for i := range choices {
		choices[i] = map[string]any{"name": "Gaming", "value": "gaming"}
	}
	e := wantError(t, w.DoInvalid("POST", callbackPath(in), map[string]any{"type": 8, "data": map[string]any{"choices": choices}}), 400, 50035)
	if fieldError(e, "data.choices") != "BASE_TYPE_MAX_LENGTH" {
		t.Fatalf("26 choices: %v", e)
	}
	choices[24] = map[string]any{"name": "Art", "value": "art"}
	r := w.Do("POST", callbackPath(in)+"?with_response=true", map[string]any{"type": 8, "data": map[string]any{"choices": choices[:25]}})
	wantStatus(t, r, 200)
	// The control API shows the choices as the bot sent them.
	st := w.Interaction(in.ID)
	if !st.Acked || st.AckType != 8 || len(st.Choices) != 25 {
		t.Fatalf("status %+v", st)
	}
	if st.Choices[0] != (sim.Choice{Name: "Gaming", Value: "gaming"}) || st.Choices[24] != (sim.Choice{Name: "Art", Value: "art"}) {
		t.Fatalf("choices %+v", st.Choices)
	}
	// A command cannot be answered with choices.
	cmd := w.command(t)
	wantError(t, w.Do("POST", callbackPath(cmd), map[string]any{"type": 8, "data": map[string]any{"choices": []any{}}}), 400, 50035)
}

func TestSelectMenuResolvedData(t *testing.T) {
	w := newWorld(t)
	gw := w.gateway(t, allTestIntents)
	msg := w.post(t, w.g.Channel("general"), map[string]any{"content": "pick"})["id"].(string)
	for _, tc := range []struct {
		ctype int
		value string
		kinds []string
	}{
		{5, w.g.Member("dave"), []string{"members", "users"}},
		{6, w.g.Role("Art"), []string{"roles"}},
		{7, w.g.Role("Art"), []string{"roles"}},
		{8, w.g.Channel("roles"), []string{"channels"}},
	} {
		_, data := interactionData(t, w, gw, sim.InteractionRequest{Kind: "component", CustomID: "pick", MessageID: msg,
			ComponentType: tc.ctype, Values: []string{tc.value}})
		res, _ := data["resolved"].(map[string]any)
		if len(res) != len(tc.kinds) {
			t.Fatalf("type %d: resolved %v", tc.ctype, res)
		}
		for _, k := range tc.kinds {
			if res[k].(map[string]any)[tc.value] == nil {
				t.Fatalf("type %d: resolved %s lacks %s: %v", tc.ctype, k, tc.value, res)
			}
		}
	}
}

// A timed-out member may only view channels and read their history
// (Permissions: "Timed out members will temporarily lose all permissions
// except VIEW_CHANNEL and READ_MESSAGE_HISTORY"), and an interaction says
// so, for its invoker and for resolved members; the timeout's end gives
// the permissions back.
func TestTimedOutMemberPermissions(t *testing.T) {
	f := sim.DefaultFixture()
	f.BotRole = &sim.FixtureRole{Name: "herald", Position: 5, Permissions: "1099511627776"} // Moderate Members
	w := newWorldWith(t, f)
	gw := w.gateway(t, allTestIntents)
	carol := w.g.Member("carol")
	general := w.g.Channel("general")
	until := w.Clock.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	wantStatus(t, w.Do("PATCH", "/guilds/"+w.g.ID+"/members/"+carol, map[string]any{"communication_disabled_until": until}), 200)
	const viewAndHistory = "66560" // 1<<10 | 1<<16
	permissions := func(user string) (invoker, resolved string) {
		t.Helper()
		w.Interact(sim.InteractionRequest{GuildID: w.g.ID, ChannelID: general, UserID: user, Kind: "command", Name: "herald",
			Options: []any{map[string]any{"name": "member", "type": 6, "value": carol}}})
		ev := gw.next("INTERACTION_CREATE")
		member := ev["data"].(map[string]any)["resolved"].(map[string]any)["members"].(map[string]any)[carol].(map[string]any)
		return ev["member"].(map[string]any)["permissions"].(string), member["permissions"].(string)
	}
	if invoker, resolved := permissions(carol); invoker != viewAndHistory || resolved != viewAndHistory {
		t.Errorf("timed out: invoker %s, resolved %s; want %s", invoker, resolved, viewAndHistory)
	}
	if _, resolved := permissions(w.g.Member("alice")); resolved != viewAndHistory {
		t.Errorf("timed out, resolved for another invoker: %s, want %s", resolved, viewAndHistory)
	}
	w.Clock.Advance(time.Hour)
	if invoker, resolved := permissions(carol); invoker == viewAndHistory || invoker != resolved {
		t.Errorf("after the timeout: invoker %s, resolved %s; want the permissions back", invoker, resolved)
	}
}
