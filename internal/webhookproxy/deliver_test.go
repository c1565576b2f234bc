package webhookproxy_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/heraldtest"
)

const executeRoute = "POST /webhooks/{webhook_id}/{webhook_token}"

// One webhook's backlog under Discord's rate limit is delivered in the
// order it was accepted, while another webhook's message goes out at
// once: a slow target never blocks another.
func TestOrderAndIsolation(t *testing.T) {
	t.Parallel()
	p := start(t, nil)
	p.Sim.SetLimits(sim.LimitChange{Route: executeRoute, Limit: 2, WindowMS: 1000})
	general := p.Channel("general")
	other, otherToken := p.webhook(t, general)
	const n = 10
	for i := range n {
		if a := p.execute(t, "", map[string]any{"content": "a" + strconv.Itoa(i)}); a.status != http.StatusNoContent {
			t.Fatalf("%d: %d %s", i, a.status, a.body)
		}
	}
	a := p.send(t, http.MethodPost, "/api/webhooks/"+other+"/"+otherToken+"?wait=true", "application/json", []byte(`{"content":"b"}`), nil)
	if a.status != http.StatusOK {
		t.Fatalf("other webhook: %d %s", a.status, a.body)
	}
	if got := len(p.byWebhook(general, p.hook)); got == n {
		t.Errorf("the other webhook's message waited for the whole backlog")
	}
	p.Eventually("the backlog delivered", func() bool { return len(p.byWebhook(general, p.hook)) == n })
	for i, m := range p.byWebhook(general, p.hook) {
		if want := "a" + strconv.Itoa(i); m.Content != want {
			t.Errorf("message %d is %q, want %q", i, m.Content, want)
		}
	}
}

// 5xx answers are retried with backoff; the simulator did not apply
// them, so reading back finds nothing and the message is sent once.
func TestServerErrorsRetried(t *testing.T) {
	t.Parallel()
	p := start(t, nil)
	p.Sim.SetFault(sim.Fault{Route: executeRoute, Status: 502, Count: 2})
	if a := p.execute(t, "", map[string]any{"content": "after 5xx"}); a.status != http.StatusNoContent {
		t.Fatalf("%d %s", a.status, a.body)
	}
	p.Eventually("delivered", func() bool { return len(p.byWebhook(p.Channel("general"), p.hook)) == 1 })
	if m := p.Metrics(); !strings.Contains(m, `herald_webhookproxy_retried_total{reason="unknown_outcome"} 2`) {
		t.Errorf("retries not counted:\n%s", grep(m, "webhookproxy_retried"))
	}
	p.Eventually("recorded", func() bool {
		return p.count(t, `SELECT count(*) FROM webhookproxy_deliveries WHERE state = 'delivered' AND attempts = 3`) == 1
	})
}

// An answer lost after Discord applied the request is reconciled by
// reading the channel back: the message exists, so it is not sent again.
func TestLostAnswerReconciled(t *testing.T) {
	t.Parallel()
	p := start(t, nil)
	p.Sim.SetFault(sim.Fault{Route: executeRoute, DropAfterApply: 1})
	a := p.execute(t, "?wait=true", map[string]any{"content": "exactly once", "embeds": []any{map[string]any{"title": "t"}}})
	if a.status != http.StatusOK && a.status != http.StatusAccepted {
		t.Fatalf("%d %s", a.status, a.body)
	}
	p.Eventually("recorded as delivered", func() bool {
		return p.count(t, `SELECT count(*) FROM webhookproxy_deliveries WHERE state = 'delivered'`) == 1
	})
	if msgs := p.byWebhook(p.Channel("general"), p.hook); len(msgs) != 1 {
		t.Errorf("%d messages, want exactly 1", len(msgs))
	}
	if m := p.Metrics(); !strings.Contains(m, `herald_webhookproxy_reconciled_total{result="found"} 1`) {
		t.Errorf("reconciliation not counted:\n%s", grep(m, "reconciled"))
	}
}

// Without the Message Content intent Discord shows the bot no webhook
// message's content, so a lost answer cannot be read back: herald does
// not read the channel in vain and sends again — the notification is
// never lost, at worst posted twice — and counts it as unknowable.
func TestLostAnswerWithoutMessageContent(t *testing.T) {
	t.Parallel()
	p := start(t, nil, heraldtest.WithApplicationFlags(0))
	p.Sim.SetFault(sim.Fault{Route: executeRoute, DropAfterApply: 1})
	a := p.execute(t, "?wait=true", map[string]any{"content": "at least once"})
	if a.status != http.StatusOK && a.status != http.StatusAccepted {
		t.Fatalf("%d %s", a.status, a.body)
	}
	p.Eventually("recorded as delivered", func() bool {
		return p.count(t, `SELECT count(*) FROM webhookproxy_deliveries WHERE state = 'delivered'`) == 1
	})
	if msgs := p.byWebhook(p.Channel("general"), p.hook); len(msgs) != 2 {
		t.Errorf("%d messages, want the lost one and its resend", len(msgs))
	}
	for _, r := range p.Sim.Server.Requests() {
		if r.Method == http.MethodGet && r.Route == "/channels/{channel_id}/messages" {
			t.Error("herald read the channel back although Discord blanks what it would compare")
		}
	}
	if m := p.Metrics(); !strings.Contains(m, `herald_webhookproxy_reconciled_total{result="unknowable"} 1`) {
		t.Errorf("the resend not counted:\n%s", grep(m, "reconciled"))
	}
}

// A webhook of a forum channel posts a new thread with thread_name, as on
// Discord; one without a thread gets Discord's 220001, which the proxy
// cannot foresee (it does not know the webhook's channel): the caller
// waiting reads it, and the delivery is a dead letter.
func TestForumWebhookPostsInAThread(t *testing.T) {
	t.Parallel()
	p := start(t, nil)
	r := p.Sim.Do(http.MethodPost, "/guilds/"+p.Guild.ID+"/channels", map[string]any{"name": "incidents", "type": 15})
	var forum discordgo.Channel
	r.JSON(t, &forum)
	p.hook, p.token = p.webhook(t, forum.ID)
	a := p.execute(t, "?wait=true", map[string]any{"content": "deploy 42 failed", "thread_name": "deploy 42"})
	if a.status != http.StatusOK {
		t.Fatalf("a new post: %d %s", a.status, a.body)
	}
	post := a.json(t)["channel_id"].(string)
	if msgs := p.byWebhook(post, p.hook); len(msgs) != 1 {
		t.Errorf("%d messages in the new post, want 1", len(msgs))
	}
	a = p.execute(t, "?wait=true", map[string]any{"content": "where to?"})
	if a.status != http.StatusBadRequest || a.json(t)["code"] != float64(220001) {
		t.Fatalf("%d %s, want Discord's 400 220001", a.status, a.body)
	}
	if n := p.count(t, `SELECT count(*) FROM webhookproxy_deliveries WHERE state = 'dead' AND attempts = 1`); n != 1 {
		t.Fatalf("%d dead letters, want the one without a thread", n)
	}
}

// A 4xx other than a rate limit is dead-lettered at once with Discord's
// answer; the dead letter can be listed, replayed and purged.
func TestDeadLetters(t *testing.T) {
	t.Parallel()
	p := start(t, nil)
	// A thread that does not exist: Discord answers 404 Unknown Channel.
	a := p.execute(t, "?wait=true&thread_id=1100000000000000009", map[string]any{"content": "lost thread"})
	if a.status != http.StatusNotFound || a.json(t)["code"] != float64(10003) {
		t.Fatalf("%d %s, want Discord's 404 Unknown Channel", a.status, a.body)
	}
	if n := p.count(t, `SELECT count(*) FROM webhookproxy_deliveries WHERE state = 'dead' AND attempts = 1`); n != 1 {
		t.Fatalf("%d dead letters after one attempt, want 1", n)
	}
	list := p.admin(t, http.MethodGet, "/proxy/dead?webhook_id="+p.hook)
	if list.status != http.StatusOK || !strings.Contains(string(list.body), "10003") || strings.Contains(string(list.body), p.token) {
		t.Errorf("dead letters: %d %s", list.status, list.body)
	}
	if r := p.admin(t, http.MethodPost, "/proxy/dead/replay"); r.status != http.StatusOK || r.json(t)["replayed"] != float64(1) {
		t.Errorf("replay: %d %s", r.status, r.body)
	}
	p.Eventually("dead again after the replay", func() bool {
		return p.count(t, `SELECT count(*) FROM webhookproxy_deliveries WHERE state = 'dead' AND attempts = 1`) == 1
	})
	if r := p.admin(t, http.MethodDelete, "/proxy/dead"); r.status != http.StatusOK || r.json(t)["purged"] != float64(1) {
		t.Errorf("purge: %d %s", r.status, r.body)
	}
	if n := p.count(t, `SELECT count(*) FROM webhookproxy_deliveries`); n != 0 {
		t.Errorf("%d deliveries after the purge", n)
	}
}

// A webhook id Discord does not know is refused with Discord's answer
// after one question and never stored; a webhook deleted after it was
// used is marked dead by its delivery's Unknown Webhook (10015): its
// deliveries are dead-lettered and later requests refused at once,
// without calling Discord again.
func TestDeadWebhook(t *testing.T) {
	t.Parallel()
	p := start(t, nil)
	unknown := func(path string) {
		t.Helper()
		a := p.send(t, http.MethodPost, path, "application/json", []byte(`{"content":"x"}`), nil)
		if a.status != http.StatusNotFound || a.json(t)["code"] != float64(10015) {
			t.Errorf("%s: %d %s, want 404 Unknown Webhook", path, a.status, a.body)
		}
	}
	never := "/api/webhooks/1100000000000000007/sometoken"
	calls := len(p.Sim.Requests())
	unknown(never)
	unknown(never)
	if n := len(p.Sim.Requests()) - calls; n != 1 {
		t.Errorf("%d calls to Discord for an unknown webhook asked about twice, want 1", n)
	}

	if a := p.execute(t, "?wait=true", map[string]any{"content": "first"}); a.status != http.StatusOK {
		t.Fatalf("first: %d %s", a.status, a.body)
	}
	if r := p.Sim.Do(http.MethodDelete, "/webhooks/"+p.hook, nil); r.Status != http.StatusNoContent {
		t.Fatalf("delete webhook: %d %s", r.Status, r.Body)
	}
	gone := "/api/webhooks/" + p.hook + "/" + p.token
	unknown(gone + "?wait=true")
	calls = len(p.Sim.Requests())
	unknown(gone)
	if n := p.count(t, `SELECT count(*) FROM webhookproxy_deliveries WHERE state = 'dead'`); n != 1 {
		t.Errorf("%d dead letters, want the one sent after the deletion", n)
	}
	if len(p.Sim.Requests()) != calls {
		t.Error("Discord was called for a dead webhook")
	}
	targets := p.admin(t, http.MethodGet, "/proxy/targets")
	if !strings.Contains(string(targets.body), `"dead":true`) {
		t.Errorf("targets: %s", targets.body)
	}
}

func grep(text, sub string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// Reconciling a lost answer reads the channel the webhook was last known
// to post in, without asking Discord again; when the webhook moves,
// WEBHOOKS_UPDATE makes herald forget that channel, and the next lost
// answer is looked for where the webhook posts now.
func TestReconcileFollowsAMovedWebhook(t *testing.T) {
	t.Parallel()
	p := start(t, nil)
	tokenReads := func() int {
		n := 0
		for _, r := range p.Sim.Server.Requests() {
			if r.Method == http.MethodGet && r.Route == "/webhooks/{webhook_id}/{webhook_token}" {
				n++
			}
		}
		return n
	}
	delivered := 0
	lose := func(content string) {
		t.Helper()
		p.Sim.SetFault(sim.Fault{Route: executeRoute, DropAfterApply: 1})
		if a := p.execute(t, "?wait=true", map[string]any{"content": content}); a.status != http.StatusOK && a.status != http.StatusAccepted {
			t.Fatalf("%d %s", a.status, a.body)
		}
		delivered++
		p.Eventually(content+" recorded as delivered", func() bool {
			return p.count(t, `SELECT count(*) FROM webhookproxy_deliveries WHERE state = 'delivered'`) == delivered
		})
	}
	general, roles := p.Channel("general"), p.Channel("roles")
	// Creating the webhook sent WEBHOOKS_UPDATE for #general; handled
	// after the first delivery's token check, it would make herald forget
	// the channel that check stored. A barrier: a second webhook's event
	// for #general, handled in order after the first, marks a stored row
	// of the test's own.
	if _, err := p.DB.Exec(t.Context(), `INSERT INTO webhookproxy_webhooks (webhook_id, guild_id, channel_id, channel_current)
		VALUES ('1', $1, $2, true)`, p.Guild.ID, general); err != nil {
		t.Fatal(err)
	}
	p.webhook(t, general)
	p.Eventually("the webhooks' creation events handled", func() bool {
		return p.count(t, `SELECT count(*) FROM webhookproxy_webhooks WHERE webhook_id = '1' AND NOT channel_current`) == 1
	})
	if _, err := p.DB.Exec(t.Context(), `DELETE FROM webhookproxy_webhooks WHERE webhook_id = '1'`); err != nil {
		t.Fatal(err)
	}
	lose("before the move")
	if n := tokenReads(); n != 1 {
		t.Errorf("%d reads of the webhook, want 1 (its token's check): the reconciliation asked again", n)
	}
	if r := p.Sim.Do(http.MethodPatch, "/webhooks/"+p.hook, map[string]any{"channel_id": roles}); r.Status != http.StatusOK {
		t.Fatalf("moving the webhook: %d %s", r.Status, r.Body)
	}
	p.Eventually("the old channel no longer trusted", func() bool {
		return p.count(t, `SELECT count(*) FROM webhookproxy_webhooks WHERE NOT channel_current`) == 1
	})
	lose("after the move")
	if n := tokenReads(); n != 2 {
		t.Errorf("%d reads of the webhook, want 2: the moved one asked about once", n)
	}
	if a, b := len(p.byWebhook(general, p.hook)), len(p.byWebhook(roles, p.hook)); a != 1 || b != 1 {
		t.Errorf("%d messages in the old channel and %d in the new, want 1 and 1 (nothing sent twice)", a, b)
	}
	if n := p.count(t, `SELECT count(*) FROM webhookproxy_webhooks WHERE channel_id = '`+roles+`' AND channel_current`); n != 1 {
		t.Errorf("the webhook's new channel is not stored")
	}
}
