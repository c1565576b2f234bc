package sim_test

import (
	"strconv"
	"testing"

	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/discord/simtest"
)

// TestMessageContentIntent checks that a session without the Message
// Content intent gets guild messages blanked, except those that mention
// the bot and the bot's own, while one with the intent gets them whole.
func TestMessageContentIntent(t *testing.T) {
	w := newWorld(t)
	ch := w.g.Channel("general")
	with := w.gateway(t, allTestIntents)
	without := w.gateway(t, allTestIntents&^intentMessageContent)

	postAsMember(t, w, ch, w.g.Member("bob"), "my secret")
	if ev := with.next("MESSAGE_CREATE"); ev["content"] != "my secret" {
		t.Fatalf("with the intent: %v", ev["content"])
	}
	ev := without.next("MESSAGE_CREATE")
	if ev["content"] != "" || len(ev["embeds"].([]any)) != 0 || len(ev["attachments"].([]any)) != 0 || len(ev["components"].([]any)) != 0 || ev["id"] == nil {
		t.Fatalf("without the intent: %v", ev)
	}
	mention := "<@" + w.g.BotUserID + "> help"
	postAsMember(t, w, ch, w.g.Member("bob"), mention)
	if ev := without.next("MESSAGE_CREATE"); ev["content"] != mention || len(ev["mentions"].([]any)) != 1 {
		t.Fatalf("a mention of the bot keeps its content: %v", ev)
	}
	own := w.post(t, ch, map[string]any{"content": "from herald"})["id"].(string)
	if ev := without.next("MESSAGE_CREATE"); ev["content"] != "from herald" {
		t.Fatalf("the bot's own message keeps its content: %v", ev)
	}
	wantStatus(t, w.Do("PATCH", "/channels/"+ch+"/messages/"+own, map[string]any{"content": "edited"}), 200)
	if ev := without.next("MESSAGE_UPDATE"); ev["content"] != "edited" {
		t.Fatalf("MESSAGE_UPDATE of the bot's own message: %v", ev)
	}
}

func TestListMessagesWithoutHistory(t *testing.T) {
	w := newWorld(t)
	ch := w.g.Channel("general")
	w.post(t, ch, map[string]any{"content": "x"})
	// Without Read Message History the list is empty, not an error.
	wantStatus(t, w.Do("PUT", "/channels/"+ch+"/permissions/"+w.g.BotRoleID, map[string]any{"type": 0, "deny": strconv.Itoa(1 << 16)}), 204)
	r := w.Do("GET", "/channels/"+ch+"/messages", nil)
	wantStatus(t, r, 200)
	if l := jsonList(t, r); len(l) != 0 {
		t.Fatalf("listed %d messages without Read Message History", len(l))
	}
}

// An application without the Message Content intent reads messages over
// REST with content, embeds, attachments and components empty (and poll
// left out), except its own, DMs and those that mention it: "The Message
// Content intent controls access to several fields within message objects
// across both Gateway events and REST API responses" (Discord's "You might
// not need a privileged intent", "Message Content Intent"; Messages,
// "Message Object", note [2]). The intent the session identified with
// plays no part ("HTTP API restrictions are independent of Gateway
// restrictions", Gateway, "Privileged Intents").
func TestMessageContentInRESTReads(t *testing.T) {
	w := newWorld(t)
	w.SetApplicationFlags(sim.AppFlagGatewayGuildMembersLimited) // Message Content off
	ch := w.g.Channel("general")
	secret := postAsMember(t, w, ch, w.g.Member("bob"), "my secret")
	mention := "<@" + w.g.BotUserID + "> help"
	mentioned := postAsMember(t, w, ch, w.g.Member("bob"), mention)
	own := w.post(t, ch, map[string]any{"content": "from herald", "embeds": []any{map[string]any{"title": "t"}}})["id"].(string)
	wantStatus(t, w.Do("PUT", "/channels/"+ch+"/messages/pins/"+secret, nil), 204)

	blank := func(where string, m map[string]any) {
		t.Helper()
		if m["content"] != "" || len(m["embeds"].([]any)) != 0 || len(m["attachments"].([]any)) != 0 || len(m["components"].([]any)) != 0 || m["id"] != secret {
			t.Errorf("%s: %v, want message %s without its content", where, m, secret)
		}
	}
	blank("GET message", jsonMap(t, w.Do("GET", "/channels/"+ch+"/messages/"+secret, nil)))
	byID := map[string]map[string]any{}
	for _, m := range jsonList(t, w.Do("GET", "/channels/"+ch+"/messages?limit=100", nil)) {
		byID[m["id"].(string)] = m
	}
	blank("GET messages", byID[secret])
	if byID[mentioned]["content"] != mention || byID[own]["content"] != "from herald" || len(byID[own]["embeds"].([]any)) != 1 {
		t.Errorf("a mention of the bot and the bot's own message keep their content: %v, %v", byID[mentioned], byID[own])
	}
	var pins struct {
		Items []struct {
			Message map[string]any `json:"message"`
		} `json:"items"`
	}
	w.Do("GET", "/channels/"+ch+"/messages/pins", nil).JSON(t, &pins)
	if len(pins.Items) != 1 {
		t.Fatalf("pins: %+v", pins)
	}
	blank("GET pins", pins.Items[0].Message)

	w.SetApplicationFlags(simtest.PortalIntents)
	if m := jsonMap(t, w.Do("GET", "/channels/"+ch+"/messages/"+secret, nil)); m["content"] != "my secret" {
		t.Errorf("with the intent switched on: %v", m["content"])
	}
}
