package sim_test

import (
	"strconv"
	"testing"
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
