package sim_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/discord/simtest"
)

// doWithReason sends a bodiless request as the bot with an
// X-Audit-Log-Reason, URL-encoded as Discord requires.
func (w *world) doWithReason(t *testing.T, method, path, reason string) int {
	t.Helper()
	req, err := http.NewRequest(method, "https://discord.com/api/v10"+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bot "+simtest.Token)
	req.Header.Set("X-Audit-Log-Reason", url.PathEscape(reason))
	return w.Send(req).Status
}

func TestMembersReadAndSearch(t *testing.T) {
	w := newWorld(t)
	base := "/guilds/" + w.g.ID + "/members"
	m := jsonMap(t, w.Do("GET", base+"/"+w.g.Member("alice"), nil))
	if m["user"].(map[string]any)["username"] != "alice" {
		t.Fatalf("member %v", m)
	}
	wantError(t, w.Do("GET", base+"/1", nil), 404, 10007)
	if all := jsonList(t, w.Do("GET", base+"?limit=1000", nil)); len(all) != 6 {
		t.Fatalf("%d members, want 6 (owner, bot, four fixture members)", len(all))
	}
	page := jsonList(t, w.Do("GET", base+"?limit=2&after="+w.g.Member("alice"), nil))
	if len(page) != 2 || page[0]["user"].(map[string]any)["username"] != "bob" {
		t.Fatalf("page after alice %v", page)
	}
	found := jsonList(t, w.Do("GET", base+"/search?query=CA&limit=10", nil))
	if len(found) != 1 || found[0]["user"].(map[string]any)["username"] != "carol" {
		t.Fatalf("search %v", found)
	}
	wantError(t, w.DoInvalid("GET", base+"/search", nil), 400, 50035)
	wantError(t, w.DoInvalid("GET", base+"/search?query=a&limit=1001", nil), 400, 50035)
	roles := jsonList(t, w.Do("GET", "/guilds/"+w.g.ID+"/roles", nil))
	if len(roles) != 7 || roles[0]["name"] != "@everyone" {
		t.Fatalf("roles %v", roles)
	}
}

func TestModifyMember(t *testing.T) {
	f := sim.DefaultFixture()
	f.BotRole = &sim.FixtureRole{Name: "herald", Position: 5, Permissions: "8"} // Administrator, below Moderator
	w := newWorldWith(t, f)
	base := "/guilds/" + w.g.ID + "/members/"
	dave, alice := w.g.Member("dave"), w.g.Member("alice")
	until := w.Clock.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	r := w.Do("PATCH", base+dave, map[string]any{"nick": "Dave", "roles": []string{w.g.Role("News")}, "communication_disabled_until": until})
	wantStatus(t, r, 200)
	m := jsonMap(t, r)
	if m["nick"] != "Dave" || m["communication_disabled_until"] == nil || len(m["roles"].([]any)) != 1 {
		t.Fatalf("modified member %v", m)
	}
	wantStatus(t, w.Do("PATCH", base+dave, map[string]any{"communication_disabled_until": nil}), 200)
	// alice is a Moderator, above the bot's role.
	wantError(t, w.Do("PATCH", base+alice, map[string]any{"nick": "A"}), 403, 50013)
	wantError(t, w.Do("PATCH", base+alice, map[string]any{"communication_disabled_until": until}), 403, 50013)
	wantError(t, w.Do("PATCH", base+dave, map[string]any{"roles": []string{w.g.Role("Moderator")}}), 403, 50013)
	tooLong := w.Clock.Now().Add(29 * 24 * time.Hour).UTC().Format(time.RFC3339)
	wantError(t, w.Do("PATCH", base+dave, map[string]any{"communication_disabled_until": tooLong}), 400, 50035)
	w.Clock.Advance(10 * time.Second)
	wantError(t, w.Do("PATCH", base+dave, map[string]any{"roles": []string{"1"}}), 404, 10011)
}

func TestAuditLogReasonRecorded(t *testing.T) {
	w := newWorld(t)
	reason := "ticket #12: spam, per ü policy"
	path := "/guilds/" + w.g.ID + "/members/" + w.g.Member("dave") + "/roles/" + w.g.Role("News")
	if status := w.doWithReason(t, "PUT", path, reason); status != 204 {
		t.Fatalf("PUT role: %d", status)
	}
	long := strings.Repeat("r", 600)
	if status := w.doWithReason(t, "DELETE", path, long); status != 204 {
		t.Fatalf("DELETE role: %d", status)
	}
	reqs := w.Requests()
	if got := reqs[len(reqs)-2].AuditLogReason; got != reason {
		t.Fatalf("reason %q, want %q decoded", got, reason)
	}
	if got := reqs[len(reqs)-1].AuditLogReason; got != long[:512] {
		t.Fatalf("reason of %d characters, want the 512 Discord keeps", len(got))
	}
}

func TestModifyMemberNeedsPermissions(t *testing.T) {
	w := newWorld(t)
	base := "/guilds/" + w.g.ID + "/members/" + w.g.Member("dave")
	// The default bot role has neither Manage Nicknames nor Moderate Members.
	wantError(t, w.Do("PATCH", base, map[string]any{"nick": "D"}), 403, 50013)
	until := w.Clock.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	wantError(t, w.Do("PATCH", base, map[string]any{"communication_disabled_until": until}), 403, 50013)
}

// List Guild Members "requires the GUILD_MEMBERS Privileged Intent"
// (Discord's Guild resource, "List Guild Members"; "You might not need a
// privileged intent": HTTP API restrictions are independent of the
// intents a session identified with). Without it Discord answers 403
// 50001 Missing Access (discordgo#820, Discord.Net#1908). Search Guild
// Members carries no such requirement in the docs and keeps working.
func TestListMembersNeedsServerMembersIntent(t *testing.T) {
	w := newWorld(t)
	w.SetApplicationFlags(sim.AppFlagGatewayMessageContentLimited) // Server Members off
	base := "/guilds/" + w.g.ID + "/members"
	e := wantError(t, w.Do("GET", base+"?limit=1000", nil), 403, 50001)
	if e.Message != "Missing Access" {
		t.Fatalf("message %q", e.Message)
	}
	if l := jsonList(t, w.Do("GET", base+"/search?query=ali", nil)); len(l) != 1 {
		t.Fatalf("search: %v", l)
	}
	wantStatus(t, w.Do("GET", base+"/"+w.g.Member("alice"), nil), 200)
	if st := w.Stats(); st.InvalidRequests != 1 {
		t.Fatalf("the 403 counts as an invalid request: %+v", st)
	}
	w.SetApplicationFlags(sim.AppFlagGatewayGuildMembers) // a verified application's bit
	if l := jsonList(t, w.Do("GET", base+"?limit=1000", nil)); len(l) != 6 {
		t.Fatalf("with the intent: %d members", len(l))
	}
}
