package sim_test

import (
	"testing"

	"github.com/herald-bot/herald/internal/discord/sim"
)

func TestPrivateThreadLifecycle(t *testing.T) {
	w := newWorld(t)
	parent := w.g.Channel("support-info")
	r := w.Do("POST", "/channels/"+parent+"/threads", map[string]any{"name": "ticket-0001", "type": 12, "invitable": false})
	wantStatus(t, r, 201)
	var th struct {
		ID       string `json:"id"`
		Type     int    `json:"type"`
		ParentID string `json:"parent_id"`
		Meta     struct {
			Archived  bool `json:"archived"`
			Invitable bool `json:"invitable"`
		} `json:"thread_metadata"`
	}
	r.JSON(t, &th)
	if th.Type != 12 || th.ParentID != parent || th.Meta.Invitable {
		t.Fatalf("thread %s", r.Body)
	}
	dave := w.g.Member("dave")
	wantStatus(t, w.Do("PUT", "/channels/"+th.ID+"/thread-members/"+dave, nil), 204)
	wantError(t, w.Do("PUT", "/channels/"+th.ID+"/thread-members/42", nil), 404, 10007)
	if m := w.post(t, th.ID, map[string]any{"content": "hello dave"}); m["channel_id"] != th.ID {
		t.Fatalf("thread message %v", m)
	}
	snap := w.Guild(w.g.ID)
	if len(snap.Threads) != 1 || len(snap.Threads[0].Members) != 2 {
		t.Fatalf("threads %+v", snap.Threads)
	}
	wantStatus(t, w.Do("DELETE", "/channels/"+th.ID+"/thread-members/"+dave, nil), 204)

	// Lock and archive: members can no longer be added.
	wantStatus(t, w.Do("PATCH", "/channels/"+th.ID, map[string]any{"archived": true, "locked": true}), 200)
	snap = w.Guild(w.g.ID)
	if !snap.Threads[0].Archived || !snap.Threads[0].Locked {
		t.Fatalf("thread %+v", snap.Threads[0])
	}
	wantError(t, w.Do("PUT", "/channels/"+th.ID+"/thread-members/"+dave, nil), 400, 50083)

	// Deleting the parent deletes the thread with it.
	wantStatus(t, w.Do("DELETE", "/channels/"+parent, nil), 200)
	wantError(t, w.Do("GET", "/channels/"+th.ID, nil), 404, 10003)
	if n := len(w.Guild(w.g.ID).Threads); n != 0 {
		t.Fatalf("%d threads left", n)
	}
}

func TestThreadPermissions(t *testing.T) {
	w := newWorld(t)
	created := w.CreateGuild(sim.Fixture{
		Name:     "no-threads",
		Channels: []sim.FixtureChannel{{Name: "text"}},
		BotRole:  &sim.FixtureRole{Name: "bot", Permissions: "3072"}, // view + send
		Everyone: "0",
	})
	wantError(t, w.Do("POST", "/channels/"+created.Channel("text")+"/threads", map[string]any{"name": "t", "type": 12}), 403, 50013)
	wantError(t, w.Do("POST", "/channels/"+w.g.Channel("Support")+"/threads", map[string]any{"name": "t"}), 400, 50024)
}

func TestWebhooks(t *testing.T) {
	w := newWorld(t)
	ch := w.g.Channel("general")
	r := w.Do("POST", "/channels/"+ch+"/webhooks", map[string]any{"name": "alerts"})
	wantStatus(t, r, 200)
	var hook struct {
		ID, Token, ChannelID string
	}
	r.JSON(t, &hook)
	if hook.Token == "" {
		t.Fatalf("webhook %s", r.Body)
	}
	base := "/webhooks/" + hook.ID + "/" + hook.Token
	wantStatus(t, w.DoAs("POST", base, "", map[string]any{"content": "no wait"}), 204)
	m := w.DoAs("POST", base+"?wait=true", "", map[string]any{"content": "wait", "username": "CI"})
	wantStatus(t, m, 200)
	var msg struct {
		ID        string `json:"id"`
		WebhookID string `json:"webhook_id"`
		Author    struct {
			ID string `json:"id"`
		} `json:"author"`
	}
	m.JSON(t, &msg)
	if msg.WebhookID != hook.ID || msg.Author.ID != hook.ID {
		t.Fatalf("webhook message %s", m.Body)
	}
	wantStatus(t, w.DoAs("PATCH", base+"/messages/"+msg.ID, "", map[string]any{"content": "edited"}), 200)
	msgs := w.Messages(ch)
	if len(msgs) != 2 || msgs[1].Content != "edited" {
		t.Fatalf("messages %+v", msgs)
	}
	wantStatus(t, w.DoAs("DELETE", base+"/messages/"+msg.ID, "", nil), 204)
	wantError(t, w.DoAs("PATCH", base+"/messages/"+msg.ID, "", map[string]any{"content": "x"}), 404, 10008)
	wantError(t, w.DoAs("POST", "/webhooks/"+hook.ID+"/wrong", "", map[string]any{"content": "x"}), 401, 50027)
	wantError(t, w.DoAs("POST", "/webhooks/1234/"+hook.Token, "", map[string]any{"content": "x"}), 404, 10015)

	// Fifteen webhooks per channel.
	w.SetLimits(sim.LimitChange{Route: "POST /channels/{channel_id}/webhooks", Limit: 100, WindowMS: 1000})
	for range 14 {
		wantStatus(t, w.Do("POST", "/channels/"+ch+"/webhooks", map[string]any{"name": "more"}), 200)
	}
	wantError(t, w.Do("POST", "/channels/"+ch+"/webhooks", map[string]any{"name": "sixteenth"}), 400, 30007)
	// Deleting the channel deletes its webhooks.
	wantStatus(t, w.Do("DELETE", "/channels/"+ch, nil), 200)
	wantError(t, w.DoAs("POST", base, "", map[string]any{"content": "x"}), 404, 10015)
}

func TestCommandsBulkOverwrite(t *testing.T) {
	w := newWorld(t)
	app := w.g.ApplicationID
	cmds := []map[string]any{
		{"name": "ticket", "description": "Open a ticket", "type": 1},
		{"name": "rolemenu", "description": "Role menus", "type": 1},
	}
	r := w.Do("PUT", "/applications/"+app+"/commands", cmds)
	wantStatus(t, r, 200)
	var first []struct{ ID, Name, Version, ApplicationID string }
	r.JSON(t, &first)
	if len(first) != 2 || first[0].ID == "" {
		t.Fatalf("commands %s", r.Body)
	}
	cmds[1]["description"] = "Role menus, changed"
	var second []struct{ ID, Name, Version string }
	w.Clock.Advance(20e9)
	r = w.Do("PUT", "/applications/"+app+"/commands", cmds)
	wantStatus(t, r, 200)
	r.JSON(t, &second)
	if second[0].ID != first[0].ID || second[0].Version != first[0].Version || second[1].ID != first[1].ID || second[1].Version == first[1].Version {
		t.Fatalf("overwrite ids/versions: %+v then %+v", first, second)
	}
	e := wantError(t, w.Do("PUT", "/applications/"+app+"/guilds/"+w.g.ID+"/commands", []map[string]any{{"name": "Bad Name", "description": "x"}}), 400, 50035)
	if fieldError(e, "0.name") == "" {
		t.Fatalf("errors %+v", e)
	}
	wantStatus(t, w.Do("PUT", "/applications/"+app+"/guilds/"+w.g.ID+"/commands", cmds[:1]), 200)
	wantError(t, w.Do("PUT", "/applications/1/commands", cmds), 403, 50001)
}
