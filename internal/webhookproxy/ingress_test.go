package webhookproxy_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"
)

// A JSON execute end to end: 204 once stored, then the River job posts it
// through the simulator's execute-webhook route, with the username
// override; the token is in no log line.
func TestExecuteJSON(t *testing.T) {
	t.Parallel()
	p := start(t, nil)
	general := p.Channel("general")
	if a := p.execute(t, "", map[string]any{"content": "deploy finished", "username": "CI"}); a.status != http.StatusNoContent {
		t.Fatalf("answer %d %s, want 204", a.status, a.body)
	}
	if n := p.count(t, `SELECT count(*) FROM webhookproxy_deliveries`); n != 1 {
		t.Fatalf("%d deliveries stored, want 1", n)
	}
	var got []*discordgo.Message
	p.Eventually("the message in #general", func() bool { got = p.byWebhook(general, p.hook); return len(got) == 1 })
	if got[0].Content != "deploy finished" || got[0].Author.Username != "CI" {
		t.Errorf("message %q by %q", got[0].Content, got[0].Author.Username)
	}
	p.Eventually("the delivery recorded", func() bool {
		return p.count(t, `SELECT count(*) FROM webhookproxy_deliveries WHERE state = 'delivered' AND message->>'id' = $1`, got[0].ID) == 1
	})
	if strings.Contains(p.Logs(), p.token) {
		t.Error("the webhook token is in herald's log")
	}
}

// ?wait=true answers Discord's message JSON once delivered; the
// versioned routes and thread_id work as Discord's do.
func TestExecuteWaitAndThread(t *testing.T) {
	t.Parallel()
	p := start(t, nil)
	general := p.Channel("general")
	thread := p.Sim.Do(http.MethodPost, "/channels/"+general+"/threads", map[string]any{"name": "incident", "type": 11})
	var th discordgo.Channel
	thread.JSON(t, &th)

	a := p.execute(t, "?wait=true", map[string]any{"content": "waited", "embeds": []any{map[string]any{"title": "build #7"}}})
	if a.status != http.StatusOK {
		t.Fatalf("wait answer %d %s", a.status, a.body)
	}
	m := a.json(t)
	if m["content"] != "waited" || m["channel_id"] != general || m["webhook_id"] != p.hook {
		t.Errorf("message %v", m)
	}
	path := "/api/v10/webhooks/" + p.hook + "/" + p.token + "?wait=1&thread_id=" + th.ID
	a = p.send(t, http.MethodPost, path, "application/json", []byte(`{"content":"in the thread"}`), nil)
	if a.status != http.StatusOK || a.json(t)["channel_id"] != th.ID {
		t.Fatalf("thread answer %d %s", a.status, a.body)
	}
	if msgs := p.byWebhook(th.ID, p.hook); len(msgs) != 1 || msgs[0].Content != "in the thread" {
		t.Errorf("thread messages %v", msgs)
	}
}

// multipart/form-data with payload_json and files is relayed as it came:
// the message carries the files as attachments.
func TestExecuteMultipart(t *testing.T) {
	t.Parallel()
	p := start(t, nil)
	ct, body := multipartBody(t, map[string]any{"content": "logs attached"}, map[string]string{"a.txt": "alpha", "b.txt": "beta"})
	a := p.send(t, http.MethodPost, "/api/v9/webhooks/"+p.hook+"/"+p.token+"?wait=true", ct, body, nil)
	if a.status != http.StatusOK {
		t.Fatalf("answer %d %s", a.status, a.body)
	}
	atts, _ := a.json(t)["attachments"].([]any)
	if len(atts) != 2 {
		t.Errorf("attachments %v, want 2", atts)
	}
}

// The Slack-compatible route is relayed as it came, for Discord to
// interpret: Alertmanager's and Grafana's Slack notifiers work unchanged.
func TestExecuteSlack(t *testing.T) {
	t.Parallel()
	p := start(t, nil)
	body := []byte(`{"text":"disk full on db-1","username":"alertmanager"}`)
	a := p.send(t, http.MethodPost, "/api/webhooks/"+p.hook+"/"+p.token+"/slack?wait=true", "application/json", body, nil)
	if a.status != http.StatusOK || strings.TrimSpace(string(a.body)) != `"ok"` {
		t.Fatalf("answer %d %s", a.status, a.body)
	}
	msgs := p.byWebhook(p.Channel("general"), p.hook)
	if len(msgs) != 1 || msgs[0].Content != "disk full on db-1" || msgs[0].Author.Username != "alertmanager" {
		t.Errorf("messages %v", msgs)
	}
	if a := p.send(t, http.MethodPost, "/api/webhooks/"+p.hook+"/"+p.token+"/teams", "application/json", body, nil); a.status != http.StatusNotFound {
		t.Errorf("unknown variant: %d %s", a.status, a.body)
	}
}

// A form-encoded body — what `curl -d content=...` sends — is taken as
// Discord takes it.
func TestExecuteForm(t *testing.T) {
	t.Parallel()
	p := start(t, nil)
	a := p.send(t, http.MethodPost, "/api/webhooks/"+p.hook+"/"+p.token+"?wait=true", "application/x-www-form-urlencoded",
		[]byte("content=backup+done&username=cron"), nil)
	if a.status != http.StatusOK {
		t.Fatalf("%d %s", a.status, a.body)
	}
	if m := a.json(t); m["content"] != "backup done" || m["author"].(map[string]any)["username"] != "cron" {
		t.Errorf("message %v", m)
	}
}

// The GitHub-compatible route is relayed with its X-GitHub-Event, which
// tells Discord what the payload is; with ?wait=true it answers 204 as
// Discord does.
func TestExecuteGitHub(t *testing.T) {
	t.Parallel()
	p := start(t, nil)
	body := []byte(`{"ref": "refs/heads/main",
		"repository": {"id": 1, "name": "herald", "full_name": "herald-bot/herald", "html_url": "https://github.com/herald-bot/herald"},
		"sender": {"id": 2, "login": "erin", "html_url": "https://github.com/erin", "avatar_url": "https://github.com/erin.png"}}`)
	a := p.send(t, http.MethodPost, "/api/webhooks/"+p.hook+"/"+p.token+"/github?wait=true", "application/json", body,
		map[string]string{"X-GitHub-Event": "push"})
	if a.status != http.StatusNoContent {
		t.Fatalf("answer %d %s", a.status, a.body)
	}
	msgs := p.byWebhook(p.Channel("general"), p.hook)
	if len(msgs) != 1 || len(msgs[0].Embeds) != 1 || msgs[0].Embeds[0].Title != "[herald-bot/herald] push" {
		t.Errorf("messages %v", msgs)
	}
}
