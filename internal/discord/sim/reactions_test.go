package sim_test

import (
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/herald-bot/herald/internal/discord/sim"
)

// reactionPath is the reactions path of a message for an emoji, encoded as
// Discord requires.
func reactionPath(ch, msg, emoji string) string {
	return "/channels/" + ch + "/messages/" + msg + "/reactions/" + url.PathEscape(emoji)
}

func TestReactions(t *testing.T) {
	f := sim.DefaultFixture()
	f.Emojis = []string{"herald"}
	w := newWorldWith(t, f)
	ch := w.g.Channel("general")
	gw := w.gateway(t, allTestIntents)
	msg := w.post(t, ch, map[string]any{"content": "react here"})["id"].(string)
	thumbs := reactionPath(ch, msg, "👍")
	custom := reactionPath(ch, msg, "herald:"+w.g.Emoji("herald"))

	wantStatus(t, w.Do("PUT", thumbs+"/@me", nil), 204)
	if ev := gw.next("MESSAGE_REACTION_ADD"); ev["user_id"] != w.g.BotUserID || ev["emoji"].(map[string]any)["name"] != "👍" || ev["member"] == nil {
		t.Fatalf("MESSAGE_REACTION_ADD %v", ev)
	}
	// Discord allows one reaction change about every 250 ms per channel.
	r := w.Do("PUT", custom+"/@me", nil)
	if e := wantError(t, r, 429, 0); e.Message != "You are being rate limited." || r.Header.Get("X-RateLimit-Limit") != "1" {
		t.Fatalf("sub-second limit: %s %v", r.Body, r.Header)
	}
	w.Clock.Advance(250 * time.Millisecond)
	wantStatus(t, w.Do("PUT", custom+"/@me", nil), 204)

	got := jsonMap(t, w.Do("GET", "/channels/"+ch+"/messages/"+msg, nil))["reactions"].([]any)
	first := got[0].(map[string]any)
	if len(got) != 2 || first["count"] != 1.0 || first["me"] != true || got[1].(map[string]any)["emoji"].(map[string]any)["id"] != w.g.Emoji("herald") {
		t.Fatalf("reactions %v", got)
	}
	users := jsonList(t, w.Do("GET", thumbs+"?limit=10", nil))
	if len(users) != 1 || users[0]["id"] != w.g.BotUserID {
		t.Fatalf("reaction users %v", users)
	}

	w.Clock.Advance(250 * time.Millisecond)
	wantStatus(t, w.Do("DELETE", thumbs+"/@me", nil), 204)
	if ev := gw.next("MESSAGE_REACTION_REMOVE"); ev["message_id"] != msg {
		t.Fatalf("MESSAGE_REACTION_REMOVE %v", ev)
	}
	w.Clock.Advance(250 * time.Millisecond)
	wantStatus(t, w.Do("DELETE", custom+"/"+w.g.BotUserID, nil), 204)
	w.Clock.Advance(250 * time.Millisecond)
	wantStatus(t, w.Do("PUT", thumbs+"/@me", nil), 204)
	w.Clock.Advance(250 * time.Millisecond)
	wantStatus(t, w.Do("DELETE", thumbs, nil), 204)
	if ev := gw.next("MESSAGE_REACTION_REMOVE_EMOJI"); ev["emoji"].(map[string]any)["name"] != "👍" {
		t.Fatalf("MESSAGE_REACTION_REMOVE_EMOJI %v", ev)
	}
	w.Clock.Advance(250 * time.Millisecond)
	wantStatus(t, w.Do("PUT", custom+"/@me", nil), 204)
	w.Clock.Advance(250 * time.Millisecond)
	wantStatus(t, w.Do("DELETE", "/channels/"+ch+"/messages/"+msg+"/reactions", nil), 204)
	gw.next("MESSAGE_REACTION_REMOVE_ALL")
	if m := jsonMap(t, w.Do("GET", "/channels/"+ch+"/messages/"+msg, nil)); m["reactions"] != nil {
		t.Fatalf("reactions left: %v", m["reactions"])
	}

	for _, tc := range []struct {
		name, method, path string
		status, code       int
	}{
		{"not an emoji", "PUT", reactionPath(ch, msg, "thumbsup") + "/@me", 404, 10014},
		{"unknown custom emoji", "PUT", reactionPath(ch, msg, "x:123") + "/@me", 404, 10014},
		{"unknown message", "PUT", reactionPath(ch, "1", "👍") + "/@me", 404, 10008},
		{"unknown user", "DELETE", thumbs + "/1", 404, 10013},
	} {
		w.Clock.Advance(time.Second)
		wantError(t, w.Do(tc.method, tc.path, nil), tc.status, tc.code)
	}
}

func TestReactionPermissions(t *testing.T) {
	f := sim.DefaultFixture()
	// View, send and read history, but neither Add Reactions nor Manage Messages.
	f.BotRole = &sim.FixtureRole{Name: "herald", Position: 5, Permissions: strconv.FormatUint(1<<10|1<<11|1<<16, 10)}
	f.Everyone = strconv.FormatUint(1<<10|1<<11|1<<16, 10)
	w := newWorldWith(t, f)
	ch := w.g.Channel("general")
	msg := w.post(t, ch, map[string]any{"content": "x"})["id"].(string)
	wantError(t, w.Do("PUT", reactionPath(ch, msg, "👍")+"/@me", nil), 403, 50013)
	w.Clock.Advance(time.Second)
	wantError(t, w.Do("DELETE", reactionPath(ch, msg, "👍")+"/"+w.g.Member("alice"), nil), 403, 50013)
	w.Clock.Advance(time.Second)
	wantError(t, w.Do("DELETE", "/channels/"+ch+"/messages/"+msg+"/reactions", nil), 403, 50013)
}

func TestReactionCap(t *testing.T) {
	w2 := newWorld(t)
	ch := w2.g.Channel("general")
	msg := w2.post(t, ch, map[string]any{"content": "x"})["id"].(string)
	emojis := []string{"😀", "😁", "😂", "🤣", "😃", "😄", "😅", "😆", "😉", "😊", "😋", "😎", "😍", "😘", "🥰", "😗", "😙", "🥲", "😚", "🙂", "🤗"}
	for i, e := range emojis {
		w2.Clock.Advance(250 * time.Millisecond)
		r := w2.Do("PUT", reactionPath(ch, msg, e)+"/@me", nil)
		if i < 20 {
			wantStatus(t, r, 204)
			continue
		}
		wantError(t, r, 400, 30010)
	}
}

func TestBulkDelete(t *testing.T) {
	w := newWorld(t)
	ch := w.g.Channel("general")
	gw := w.gateway(t, allTestIntents)
	var ids []string
	for range 3 {
		ids = append(ids, w.post(t, ch, map[string]any{"content": "spam"})["id"].(string))
	}
	path := "/channels/" + ch + "/messages/bulk-delete"
	// An id of no message counts towards the 2–100 and is skipped.
	unknown := snowflakeAt(w.Clock.Now().Add(-time.Hour))
	r := w.Do("POST", path, map[string]any{"messages": []string{ids[0], ids[1], unknown}})
	wantStatus(t, r, 204)
	if ev := gw.next("MESSAGE_DELETE_BULK"); len(ev["ids"].([]any)) != 2 || ev["channel_id"] != ch || ev["guild_id"] != w.g.ID {
		t.Fatalf("MESSAGE_DELETE_BULK %v", ev)
	}
	if msgs := w.Messages(ch); len(msgs) != 1 || msgs[0].ID != ids[2] {
		t.Fatalf("left %+v", msgs)
	}
	tooMany := make([]string, 101)
	for i := range tooMany {
		tooMany[i] = ids[2]
	}
	old := snowflakeAt(w.Clock.Now().Add(-15 * 24 * time.Hour))
	for _, tc := range []struct {
		name   string
		body   any
		status int
		code   int
	}{
		{"one message", map[string]any{"messages": []string{ids[2]}}, 400, 50016},
		{"101 messages", map[string]any{"messages": tooMany}, 400, 50016},
		{"older than two weeks", map[string]any{"messages": []string{ids[2], old}}, 400, 50034},
		{"not snowflakes", map[string]any{"messages": []string{"a", "b"}}, 400, 50035},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w.Clock.Advance(time.Second)
			wantError(t, w.DoInvalid("POST", path, tc.body), tc.status, tc.code)
		})
	}
	if n := len(w.Messages(ch)); n != 1 {
		t.Fatalf("a failed bulk delete deleted messages: %d left", n)
	}
	w.Clock.Advance(time.Second)
	r = w.Do("POST", "/channels/"+w.g.Channel("general")+"/messages/bulk-delete", map[string]any{"messages": []string{ids[2], ids[1]}})
	wantStatus(t, r, 204)
}

func TestBulkDeleteNeedsManageMessages(t *testing.T) {
	f := sim.DefaultFixture()
	f.BotRole = &sim.FixtureRole{Name: "herald", Position: 5, Permissions: strconv.FormatUint(1<<10|1<<11|1<<16, 10)}
	w := newWorldWith(t, f)
	ch := w.g.Channel("general")
	a := w.post(t, ch, map[string]any{"content": "a"})["id"].(string)
	b := w.post(t, ch, map[string]any{"content": "b"})["id"].(string)
	wantError(t, w.Do("POST", "/channels/"+ch+"/messages/bulk-delete", map[string]any{"messages": []string{a, b}}), 403, 50013)
}

// snowflakeAt is a snowflake created at t.
func snowflakeAt(t time.Time) string {
	return strconv.FormatUint(uint64(t.UnixMilli()-1420070400000)<<22, 10)
}
