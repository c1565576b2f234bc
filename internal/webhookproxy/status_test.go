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

// TestStatusNamesDeadTargets: /herald status in the webhook's guild names
// (asked by the owner, then an admin: each has a cooldown of their own)
// a proxy target whose webhook was deleted, with its channel — the proxy
// learned where the webhook posts after its first delivery.
func TestStatusNamesDeadTargets(t *testing.T) {
	t.Parallel()
	f := sim.DefaultFixture()
	f.Roles = append(f.Roles, sim.FixtureRole{Name: "Admins", Permissions: strconv.FormatInt(discordgo.PermissionManageGuild, 10), Position: 9})
	f.Members = append(f.Members, sim.FixtureMember{Username: "admin", Roles: []string{"Admins"}})
	p := start(t, nil, heraldtest.WithFixture(f))
	if a := p.execute(t, "?wait=true", map[string]any{"content": "first"}); a.status != http.StatusOK {
		t.Fatalf("%d %s", a.status, a.body)
	}
	p.Eventually("the webhook's guild to be learned", func() bool {
		var guild, channel *string
		err := p.DB.QueryRow(t.Context(), `SELECT guild_id, channel_id FROM webhookproxy_webhooks WHERE webhook_id = $1`, p.hook).Scan(&guild, &channel)
		return err == nil && guild != nil && *guild == p.Guild.ID && channel != nil && *channel == p.Channel("general")
	})
	if s := p.As("owner").Command("general", "/herald/status", nil).Reply().Content; strings.Contains(s, "Webhook proxy") {
		t.Errorf("a healthy target is named:\n%s", s)
	}
	if r := p.Sim.Do(http.MethodDelete, "/webhooks/"+p.hook, nil); r.Status != http.StatusNoContent {
		t.Fatalf("delete the webhook: %d %s", r.Status, r.Body)
	}
	if a := p.execute(t, "?wait=true", map[string]any{"content": "second"}); a.status != http.StatusNotFound {
		t.Fatalf("after the delete: %d %s, want 404", a.status, a.body)
	}
	want := "Webhook proxy to <#" + p.Channel("general") + ">: `" + p.hook + "`: the webhook was deleted"
	if s := p.As("admin").Command("general", "/herald/status", nil).Reply().Content; !strings.Contains(s, want) {
		t.Errorf("/herald status:\n%s\nwant %q", s, want)
	}
}
