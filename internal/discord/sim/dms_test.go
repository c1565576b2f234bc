package sim_test

import (
	"testing"
	"time"

	"github.com/herald-bot/herald/internal/discord/sim"
)

func TestDirectMessages(t *testing.T) {
	f := sim.DefaultFixture()
	f.Members = append(f.Members, sim.FixtureMember{Username: "erin", DMsClosed: true})
	w := newWorldWith(t, f)
	gw := w.gateway(t, allTestIntents)
	dm := jsonMap(t, w.Do("POST", "/users/@me/channels", map[string]any{"recipient_id": w.g.Member("dave")}))
	recipients := dm["recipients"].([]any)
	if dm["type"] != 1.0 || len(recipients) != 1 || recipients[0].(map[string]any)["id"] != w.g.Member("dave") {
		t.Fatalf("DM channel %v", dm)
	}
	again := jsonMap(t, w.Do("POST", "/users/@me/channels", map[string]any{"recipient_id": w.g.Member("dave")}))
	if again["id"] != dm["id"] {
		t.Fatalf("second open gave channel %v, want %v", again["id"], dm["id"])
	}
	ch := dm["id"].(string)
	w.post(t, ch, map[string]any{"content": "your ticket was closed"})
	if ev := gw.next("MESSAGE_CREATE"); ev["channel_id"] != ch || ev["guild_id"] != nil || ev["content"] != "your ticket was closed" {
		t.Fatalf("DM MESSAGE_CREATE %v", ev)
	}
	wantStatus(t, w.Do("GET", "/channels/"+ch, nil), 200)
	if msgs := jsonList(t, w.Do("GET", "/channels/"+ch+"/messages", nil)); len(msgs) != 1 {
		t.Fatalf("DM history %v", msgs)
	}

	closed := jsonMap(t, w.Do("POST", "/users/@me/channels", map[string]any{"recipient_id": w.g.Member("erin")}))["id"].(string)
	if e := wantError(t, w.Do("POST", "/channels/"+closed+"/messages", map[string]any{"content": "hi"}), 403, 50007); e.Message != "Cannot send messages to this user" {
		t.Fatalf("message %q", e.Message)
	}
	w.Clock.Advance(5 * time.Second)
	wantError(t, w.Do("POST", "/users/@me/channels", map[string]any{"recipient_id": "1"}), 404, 10013)
	// Manage Messages has no meaning in a DM.
	a := w.post(t, ch, map[string]any{"content": "a"})["id"].(string)
	b := w.post(t, ch, map[string]any{"content": "b"})["id"].(string)
	wantError(t, w.Do("POST", "/channels/"+ch+"/messages/bulk-delete", map[string]any{"messages": []string{a, b}}), 403, 50003)
}

func TestChannelPermissionOverwrites(t *testing.T) {
	w := newWorld(t)
	ch := w.g.Channel("general")
	gw := w.gateway(t, allTestIntents)
	path := "/channels/" + ch + "/permissions/"
	wantStatus(t, w.Do("PUT", path+w.g.Member("dave"), map[string]any{"type": 1, "allow": "3072", "deny": "0"}), 204)
	if ev := gw.next("CHANNEL_UPDATE"); len(ev["permission_overwrites"].([]any)) != 1 {
		t.Fatalf("CHANNEL_UPDATE %v", ev)
	}
	wantStatus(t, w.Do("PUT", path+w.g.Member("dave"), map[string]any{"type": 1, "allow": "1024", "deny": "2048"}), 204)
	ows := jsonMap(t, w.Do("GET", "/channels/"+ch, nil))["permission_overwrites"].([]any)
	if len(ows) != 1 || ows[0].(map[string]any)["deny"] != "2048" {
		t.Fatalf("overwrites %v", ows)
	}
	wantStatus(t, w.Do("PUT", path+w.g.Role("News"), map[string]any{"type": 0, "deny": "1024"}), 204)
	// The bot does not hold Administrator, so it cannot grant it.
	w.Clock.Advance(5 * time.Second)
	wantError(t, w.Do("PUT", path+w.g.Role("News"), map[string]any{"type": 0, "allow": "8"}), 403, 50013)
	wantError(t, w.Do("PUT", path+"1", map[string]any{"type": 0, "allow": "1024"}), 404, 10011)
	wantError(t, w.DoInvalid("PUT", path+w.g.Role("News"), map[string]any{"type": 2, "allow": "1024"}), 400, 50035)
	wantStatus(t, w.Do("DELETE", path+w.g.Member("dave"), nil), 204)
	w.Clock.Advance(5 * time.Second)
	wantError(t, w.Do("DELETE", path+w.g.Member("dave"), nil), 404, 10009)
}
