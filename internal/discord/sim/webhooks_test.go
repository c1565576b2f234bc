package sim_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/discord/simtest"
)

func (w *world) webhook(t *testing.T, ch string) (id, token string) {
	t.Helper()
	hook := jsonMap(t, w.Do("POST", "/channels/"+ch+"/webhooks", map[string]any{"name": "alerts"}))
	return hook["id"].(string), hook["token"].(string)
}

func TestWebhookGetAndOverrides(t *testing.T) {
	w := newWorld(t)
	ch := w.g.Channel("general")
	id, token := w.webhook(t, ch)
	got := jsonMap(t, w.Do("GET", "/webhooks/"+id, nil))
	if got["user"] == nil || got["token"] != token {
		t.Fatalf("GET /webhooks/{id}: %v", got)
	}
	anon := jsonMap(t, w.DoAs("GET", "/webhooks/"+id+"/"+token, "", nil))
	if _, ok := anon["user"]; ok || anon["id"] != id {
		t.Fatalf("GET with token must leave out user: %v", anon)
	}
	wantError(t, w.Do("GET", "/webhooks/1", nil), 404, 10015)
	wantError(t, w.DoAs("GET", "/webhooks/"+id+"/nope", "", nil), 401, 50027)

	m := jsonMap(t, w.DoAs("POST", "/webhooks/"+id+"/"+token+"?wait=true", "", map[string]any{
		"content": "deploy finished", "username": "CI", "avatar_url": "https://example.com/ci.png",
	}))
	author := m["author"].(map[string]any)
	if author["username"] != "CI" || author["avatar"] == nil || author["id"] != id {
		t.Fatalf("author %v, want the username and avatar overrides", author)
	}
	plain := jsonMap(t, w.DoAs("POST", "/webhooks/"+id+"/"+token+"?wait=true", "", map[string]any{"content": "x"}))
	if a := plain["author"].(map[string]any); a["username"] != "alerts" || a["avatar"] != nil {
		t.Fatalf("author without overrides %v", a)
	}
	w.Clock.Advance(2 * time.Second)
	r := w.DoInvalid("POST", "/webhooks/"+id+"/"+token, map[string]any{"content": "x", "username": ""})
	wantError(t, r, 400, 50035)
}

func TestWebhookGetNeedsManageWebhooks(t *testing.T) {
	w := newWorld(t)
	ch := w.g.Channel("general")
	id, _ := w.webhook(t, ch)
	// Deny the bot role Manage Webhooks in the channel.
	wantStatus(t, w.Do("PUT", "/channels/"+ch+"/permissions/"+w.g.BotRoleID, map[string]any{"type": 0, "deny": strconv.Itoa(1 << 29)}), 204)
	wantError(t, w.Do("GET", "/webhooks/"+id, nil), 403, 50013)
}

func TestWebhookThreads(t *testing.T) {
	w := newWorld(t)
	ch := w.g.Channel("general")
	id, token := w.webhook(t, ch)
	thread := jsonMap(t, w.Do("POST", "/channels/"+ch+"/threads", map[string]any{"name": "incident", "type": 11}))["id"].(string)
	other := jsonMap(t, w.Do("POST", "/channels/"+w.g.Channel("roles")+"/threads", map[string]any{"name": "elsewhere", "type": 11}))["id"].(string)
	base := "/webhooks/" + id + "/" + token
	m := jsonMap(t, w.DoAs("POST", base+"?wait=true&thread_id="+thread, "", map[string]any{"content": "in the thread"}))
	if m["channel_id"] != thread {
		t.Fatalf("message in %v, want the thread %s", m["channel_id"], thread)
	}
	msg := m["id"].(string)
	// A message in a thread is addressed with its thread_id.
	wantError(t, w.DoAs("GET", base+"/messages/"+msg, "", nil), 404, 10008)
	wantStatus(t, w.DoAs("GET", base+"/messages/"+msg+"?thread_id="+thread, "", nil), 200)
	wantStatus(t, w.DoAs("PATCH", base+"/messages/"+msg+"?thread_id="+thread, "", map[string]any{"content": "edited"}), 200)
	w.Clock.Advance(2 * time.Second)
	wantError(t, w.DoAs("POST", base+"?thread_id="+other, "", map[string]any{"content": "x"}), 404, 10003)
	wantError(t, w.DoAs("POST", base+"?thread_id=1", "", map[string]any{"content": "x"}), 404, 10003)
	wantStatus(t, w.DoAs("DELETE", base+"/messages/"+msg+"?thread_id="+thread, "", nil), 204)
}

// A webhook in a forum channel posts into a thread: the one thread_id
// names, or a new post named thread_name, whose id is its first
// message's; it must name exactly one (Execute Webhook; codes 220001 and
// 220002), and thread_name is refused outside a forum (220003). The bot
// cannot post in a forum itself (40058).
func TestWebhookForumPosts(t *testing.T) {
	w := newWorld(t)
	w.SetLimits(sim.LimitChange{Route: "POST /webhooks/{webhook_id}/{webhook_token}", Limit: 100, WindowMS: 1000})
	forum := jsonMap(t, w.Do("POST", "/guilds/"+w.g.ID+"/channels", map[string]any{"name": "incidents", "type": 15}))["id"].(string)
	id, token := w.webhook(t, forum)
	base := "/webhooks/" + id + "/" + token
	before := len(w.Messages(forum))
	wantError(t, w.DoAs("POST", base, "", map[string]any{"content": "where?"}), 400, 220001)
	wantError(t, w.DoAs("POST", base+"?thread_id=1", "", map[string]any{"content": "x", "thread_name": "both"}), 400, 220002)
	wantError(t, w.DoInvalidAs("POST", base+"?wait=true", "", map[string]any{"content": "x", "thread_name": strings.Repeat("n", 101)}), 400, 50035)

	m := jsonMap(t, w.DoAs("POST", base+"?wait=true", "", map[string]any{"content": "deploy 42 failed", "thread_name": "deploy 42"}))
	post := m["channel_id"].(string)
	if post != m["id"] {
		t.Fatalf("the post's first message %v is in %s: a forum post shares its first message's id", m["id"], post)
	}
	th := jsonMap(t, w.Do("GET", "/channels/"+post, nil))
	if th["type"] != float64(11) || th["parent_id"] != forum || th["name"] != "deploy 42" || th["owner_id"] != id {
		t.Fatalf("the post %v", th)
	}
	again := jsonMap(t, w.DoAs("POST", base+"?wait=true&thread_id="+post, "", map[string]any{"content": "deploy 42 retried"}))
	if again["channel_id"] != post {
		t.Fatalf("a reply in the post went to %v", again["channel_id"])
	}
	if n := len(w.Messages(post)); n != 2 {
		t.Fatalf("%d messages in the post, want 2", n)
	}
	if n := len(w.Messages(forum)); n != before {
		t.Fatalf("%d messages in the forum itself: refused requests posted", n-before)
	}

	general := w.g.Channel("general")
	gid, gtoken := w.webhook(t, general)
	wantError(t, w.DoAs("POST", "/webhooks/"+gid+"/"+gtoken, "", map[string]any{"content": "x", "thread_name": "no forum"}), 400, 220003)
	wantError(t, w.Do("POST", "/channels/"+forum+"/messages", map[string]any{"content": "as the bot"}), 400, 40058)
}

func TestThreadFromMessageAndMembers(t *testing.T) {
	w := newWorld(t)
	ch := w.g.Channel("general")
	msg := w.post(t, ch, map[string]any{"content": "discuss"})["id"].(string)
	r := w.Do("POST", "/channels/"+ch+"/messages/"+msg+"/threads", map[string]any{"name": "discussion", "auto_archive_duration": 1440})
	wantStatus(t, r, 201)
	th := jsonMap(t, r)
	if th["id"] != msg || th["type"] != 11.0 || th["parent_id"] != ch {
		t.Fatalf("thread %v", th)
	}
	wantError(t, w.Do("POST", "/channels/"+ch+"/messages/"+msg+"/threads", map[string]any{"name": "again"}), 400, 160004)
	w.Clock.Advance(5 * time.Second)
	wantError(t, w.Do("POST", "/channels/"+ch+"/messages/1/threads", map[string]any{"name": "x"}), 404, 10008)
	wantStatus(t, w.Do("PUT", "/channels/"+msg+"/thread-members/"+w.g.Member("dave"), nil), 204)
	wantStatus(t, w.Do("DELETE", "/channels/"+msg+"/thread-members/"+w.g.Member("dave"), nil), 204)
	wantError(t, w.Do("DELETE", "/channels/"+msg+"/thread-members/"+w.g.Member("dave"), nil), 404, 10007)
}

func TestPrivateThreadNotInvitable(t *testing.T) {
	// A private thread that is not invitable takes new members from moderators only.
	f := sim.DefaultFixture()
	f.BotRole = &sim.FixtureRole{Name: "herald", Position: 5, Permissions: strconv.FormatUint(1<<10|1<<11|1<<16|1<<36|1<<38, 10)}
	w2 := newWorldWith(t, f)
	pt := jsonMap(t, w2.Do("POST", "/channels/"+w2.g.Channel("general")+"/threads", map[string]any{"name": "private", "type": 12, "invitable": false}))
	if pt["thread_metadata"].(map[string]any)["invitable"] != false {
		t.Fatalf("private thread %v", pt)
	}
	wantError(t, w2.Do("PUT", "/channels/"+pt["id"].(string)+"/thread-members/"+w2.g.Member("dave"), nil), 403, 50013)
	r := w2.Do("PATCH", "/channels/"+pt["id"].(string), map[string]any{"name": "renamed", "archived": true})
	wantStatus(t, r, 200)
	if md := jsonMap(t, r)["thread_metadata"].(map[string]any); md["archived"] != true {
		t.Fatalf("thread metadata %v", md)
	}
}

func TestApplicationInfo(t *testing.T) {
	w := newWorld(t)
	if w.g.ApplicationID == w.g.BotUserID {
		t.Fatal("the fixture's bot user id equals its application id; older applications' differ, and herald must not assume they match")
	}
	for _, path := range []string{"/applications/@me", "/oauth2/applications/@me"} {
		app := jsonMap(t, w.Do("GET", path, nil))
		if app["id"] != w.g.ApplicationID || app["bot"].(map[string]any)["id"] != w.g.BotUserID || app["owner"] == nil ||
			app["flags"] != float64(simtest.PortalIntents) {
			t.Fatalf("%s: %v", path, app)
		}
	}
	wantError(t, w.DoInvalidAs("GET", "/applications/@me", "", nil), 401, 0)
}

func TestSlackCompatibleWebhook(t *testing.T) {
	w := newWorld(t)
	ch := w.g.Channel("general")
	id, token := w.webhook(t, ch)
	r := w.DoAs("POST", "/webhooks/"+id+"/"+token+"/slack?wait=true", "", map[string]any{
		"text": "disk full", "username": "alertmanager", "icon_url": "https://example.com/a.png"})
	wantStatus(t, r, 200)
	if string(r.Body) != `"ok"` && string(r.Body) != "\"ok\"\n" {
		t.Fatalf("answer %q, want the JSON string ok", r.Body)
	}
	msgs := w.Messages(ch)
	m := msgs[len(msgs)-1]
	if m.Content != "disk full" || m.Author.Username != "alertmanager" || m.Author.Avatar == "" || m.WebhookID != id {
		t.Fatalf("message %+v by %+v", m, m.Author)
	}
	wantError(t, w.DoAs("POST", "/webhooks/"+id+"/nope/slack", "", map[string]any{"text": "x"}), 401, 50027)
	w.Clock.Advance(2 * time.Second)
	wantError(t, w.DoInvalidAs("POST", "/webhooks/"+id+"/"+token+"/slack", "", map[string]any{"text": ""}), 400, 50006)
}

func TestGitHubCompatibleWebhook(t *testing.T) {
	w := newWorld(t)
	ch := w.g.Channel("general")
	id, token := w.webhook(t, ch)
	push := func(event string) *simtest.Response {
		req, _ := http.NewRequest("POST", "https://discord.com/api/v10/webhooks/"+id+"/"+token+"/github?wait=true",
			strings.NewReader(githubPayload))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-GitHub-Event", event)
		return w.Send(req)
	}
	before := len(w.Messages(ch))
	wantStatus(t, push("push"), 204)
	msgs := w.Messages(ch)
	if len(msgs) != before+1 || len(msgs[len(msgs)-1].Embeds) != 1 || msgs[len(msgs)-1].Embeds[0].Title != "[herald-bot/herald] push" {
		t.Fatalf("messages after a push: %d, last %+v", len(msgs), msgs[len(msgs)-1])
	}
	wantStatus(t, push("gollum"), 204)
	if len(w.Messages(ch)) != before+1 {
		t.Error("an unsupported event posted a message")
	}
}

// githubPayload is the part of a GitHub delivery Discord's spec declares.
const githubPayload = `{"ref": "refs/heads/main",
	"repository": {"id": 1, "name": "herald", "full_name": "herald-bot/herald", "html_url": "https://github.com/herald-bot/herald"},
	"sender": {"id": 2, "login": "erin", "html_url": "https://github.com/erin", "avatar_url": "https://github.com/erin.png"}}`

func TestWebhookDelete(t *testing.T) {
	w := newWorld(t)
	id, token := w.webhook(t, w.g.Channel("general"))
	if r := w.Do("DELETE", "/webhooks/"+id, nil); r.Status != http.StatusNoContent {
		t.Fatalf("DELETE /webhooks/{id}: %d %s", r.Status, r.Body)
	}
	wantError(t, w.DoAs("GET", "/webhooks/"+id+"/"+token, "", nil), 404, 10015)
	wantError(t, w.DoAs("POST", "/webhooks/"+id+"/"+token, "", map[string]any{"content": "x"}), 404, 10015)
	wantError(t, w.Do("DELETE", "/webhooks/"+id, nil), 404, 10015)
}

// A webhook's name may not contain "clyde" or "discord", in any case
// (Discord's Webhook resource, "Create Webhook"), and Discord holds an
// execute's username override to the same rule: 400 50035 with
// USERNAME_INVALID_CONTAINS, `Username cannot contain "discord"`, at the
// field (as Discord answers: qaisjp/go-discord-irc#141 for name,
// Xujiayao/Discord-MC-Chat#286 for username).
func TestWebhookNamesWithoutClydeOrDiscord(t *testing.T) {
	w := newWorld(t)
	w.SetLimits(sim.LimitChange{Route: "POST /webhooks/{webhook_id}/{webhook_token}", Limit: 100, WindowMS: 1000})
	ch := w.g.Channel("general")
	for name, word := range map[string]string{"Discord alerts": "discord", "my-CLYDE": "clyde"} {
		e := wantError(t, w.Do("POST", "/channels/"+ch+"/webhooks", map[string]any{"name": name}), 400, 50035)
		want := `{"name":{"_errors":[{"code":"USERNAME_INVALID_CONTAINS","message":"Username cannot contain \"` + word + `\""}]}}`
		if got, _ := json.Marshal(e.Errors); string(got) != want {
			t.Errorf("name %q: errors %s, want %s", name, got, want)
		}
	}
	id, token := w.webhook(t, ch)
	for _, path := range []string{"/webhooks/" + id + "/" + token, "/webhooks/" + id + "/" + token + "/slack"} {
		body := map[string]any{"content": "x", "text": "x", "username": "discordbot"}
		if strings.HasSuffix(path, "/slack") {
			delete(body, "content")
		} else {
			delete(body, "text")
		}
		e := wantError(t, w.DoAs("POST", path, "", body), 400, 50035)
		if fieldError(e, "username") != "USERNAME_INVALID_CONTAINS" {
			t.Errorf("%s: %+v", path, e.Errors)
		}
	}
	if n := len(w.Messages(ch)); n != 0 {
		t.Fatalf("%d messages posted under a refused name", n)
	}
	wantStatus(t, w.DoAs("POST", "/webhooks/"+id+"/"+token, "", map[string]any{"content": "x", "username": "Grafana"}), 204)
}

// Modify Webhook renames a webhook or moves it to another channel of the
// guild, for a bot with Manage Webhooks in both; its token then posts in
// the new channel. Discord's reference, "Webhook Resource › Modify
// Webhook": requires MANAGE_WEBHOOKS, channel_id is "the new channel id
// this webhook should be moved to", and it fires a Webhooks Update
// Gateway event; names follow the same rules as at creation (50035 for
// "discord" in one), and unknown ids answer 10003 and 10015.
func TestWebhookModify(t *testing.T) {
	w := newWorld(t)
	general, roles := w.g.Channel("general"), w.g.Channel("roles")
	id, token := w.webhook(t, general)
	got := jsonMap(t, w.Do("PATCH", "/webhooks/"+id, map[string]any{"name": "deploys", "channel_id": roles}))
	if got["name"] != "deploys" || got["channel_id"] != roles {
		t.Fatalf("PATCH /webhooks/{id}: %v", got)
	}
	m := jsonMap(t, w.DoAs("POST", "/webhooks/"+id+"/"+token+"?wait=true", "", map[string]any{"content": "moved"}))
	if m["channel_id"] != roles {
		t.Errorf("the moved webhook posted in %v, want %s", m["channel_id"], roles)
	}
	wantError(t, w.Do("PATCH", "/webhooks/"+id, map[string]any{"channel_id": "1100000000000000009"}), 404, 10003)
	wantError(t, w.DoInvalid("PATCH", "/webhooks/"+id, map[string]any{"name": "my discord hook"}), 400, 50035)
	wantError(t, w.Do("PATCH", "/webhooks/1", map[string]any{"name": "x"}), 404, 10015)
}
