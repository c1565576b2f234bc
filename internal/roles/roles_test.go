package roles_test

import (
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/heraldtest"
	"github.com/herald-bot/herald/internal/testsupport/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

const memberRoleRoute = "PUT /guilds/{guild_id}/members/{user_id}/roles/{role_id}"

// fixture: n members with Blue (and with the roles given), an admin who
// may manage roles, Red (below the bot and the admin) to hand out, Boss
// above the bot, and Helpers, which may manage threads (dangerous: it
// reads every private thread).
func fixture(n int, roles ...string) sim.Fixture {
	f := sim.DefaultFixture()
	f.Roles = append(f.Roles,
		sim.FixtureRole{Name: "Admins", Permissions: strconv.FormatInt(discordgo.PermissionManageRoles, 10), Position: 9},
		sim.FixtureRole{Name: "Red", Permissions: "0", Position: 6},
		sim.FixtureRole{Name: "Blue", Permissions: "0", Position: 7},
		sim.FixtureRole{Name: "Boss", Permissions: "0", Position: 12},
		sim.FixtureRole{Name: "Helpers", Permissions: strconv.FormatInt(discordgo.PermissionManageThreads, 10), Position: 5})
	f.BotRole = &sim.FixtureRole{Name: "herald", Position: 8}
	f.Members = append(f.Members, sim.FixtureMember{Username: "admin", Roles: []string{"Admins"}})
	for i := range n {
		f.Members = append(f.Members, sim.FixtureMember{Username: fmt.Sprintf("member%03d", i), Roles: append([]string{"Blue"}, roles...)})
	}
	return f
}

// progress waits for the progress message in #general headed by title
// until check accepts it.
func progress(t *testing.T, h *heraldtest.Herald, title string, check func(*discordgo.Message) bool) *discordgo.Message {
	t.Helper()
	var found *discordgo.Message
	h.Eventually("the progress of "+title, func() bool {
		for _, m := range h.Messages(h.Channel("general")) {
			if strings.HasPrefix(m.Content, "**"+title+"**") {
				found = m
				return check(m)
			}
		}
		return false
	})
	return found
}

func withRole(h *heraldtest.Herald, role string) int {
	n := 0
	for _, m := range h.Sim.Guild(h.Guild.ID).Members {
		if slices.Contains(m.Roles, h.Role(role)) {
			n++
		}
	}
	return n
}

func roleCalls(h *heraldtest.Herald) int {
	n := 0
	for _, r := range h.Sim.Server.Requests() {
		if r.Method+" "+r.Route == memberRoleRoute && r.Status == 204 {
			n++
		}
	}
	return n
}

var cancelledLine = regexp.MustCompile(`\*\*Cancelled by <@(\d+)>: (\d+) of 500 done, (\d+) cancelled, nothing undone\.\*\*`)

// TestBulkGrantCancelledMidway grants a role to 500 members and cancels
// half-way: the message states exactly what Discord shows — the members
// who got the role — and nothing more happens after.
func TestBulkGrantCancelledMidway(t *testing.T) {
	t.Parallel()
	h := heraldtest.New(t, heraldtest.WithFixture(fixture(500)))
	// Discord's member-role budget is 10 per 10 s per guild; the test
	// widens it so 500 changes take seconds, and the action still has to
	// respect it.
	if err := h.Sim.Server.SetLimits(sim.LimitChange{Route: memberRoleRoute, Limit: 20, WindowMS: 200}); err != nil {
		t.Fatal(err)
	}
	admin := h.As("admin")
	r := admin.Command("general", "/roles/bulk/add", heraldtest.Opts{"role": h.Role("Red"), "members-with": h.Role("Blue")}).Reply()
	if !strings.Contains(r.Content, "Progress is shown in a message in this channel") {
		t.Fatalf("answer: %q", r.Content)
	}
	title := "Add <@&" + h.Role("Red") + "> to every member with <@&" + h.Role("Blue") + ">"
	msg := progress(t, h, title, func(m *discordgo.Message) bool {
		return strings.Contains(m.Content, "✅ Done (") && len(m.Components) == 1
	})
	for _, want := range []string{"of 500 done**", "🕓 To do (", "member000", "Started by <@" + h.Member("admin") + ">"} {
		if !strings.Contains(msg.Content, want) {
			t.Errorf("progress lacks %q:\n%s", want, msg.Content)
		}
	}
	if len(msg.Content) > 2000 {
		t.Errorf("progress is %d characters, over Discord's 2000", len(msg.Content))
	}
	button := msg.Components[0].(*discordgo.ActionsRow).Components[0].(*discordgo.Button)
	if button.Label != "Cancel" {
		t.Fatalf("button: %+v", button)
	}
	// A member without Manage Roles cannot cancel.
	if got := h.As("dave").Click(msg, button.CustomID).Reply(); !strings.Contains(got.Content, "Only members who may start this action") {
		t.Errorf("dave's cancel: %q", got.Content)
	}
	if st := admin.Click(msg, button.CustomID).Ack(); st.AckType != int(discordgo.InteractionResponseDeferredMessageUpdate) {
		t.Errorf("cancel answered %+v", st)
	}
	final := progress(t, h, title, func(m *discordgo.Message) bool { return cancelledLine.MatchString(m.Content) })
	t.Logf("the progress message at the end:\n%s", final.Content)
	got := cancelledLine.FindStringSubmatch(final.Content)
	done, _ := strconv.Atoi(got[2])
	cancelled, _ := strconv.Atoi(got[3])
	if got[1] != h.Member("admin") || done+cancelled != 500 || done == 0 || cancelled == 0 {
		t.Fatalf("result %q: want the admin, a partial result adding up to 500", got[0])
	}
	if len(final.Components) != 0 {
		t.Errorf("the finished message still has buttons: %+v", final.Components)
	}
	// What the message states is what Discord shows, and stays so: once
	// no runner job is left, nothing can change it.
	calls := roleCalls(h)
	h.Eventually("no runner job left", func() bool {
		open := -1
		h.DB.QueryRow(t.Context(), `SELECT count(*) FROM river_job WHERE kind = 'bulk_run' AND state NOT IN ('completed')`).Scan(&open)
		return open == 0
	})
	if n := withRole(h, "Red"); n != done {
		t.Errorf("%d members have Red, the message says %d done", n, done)
	}
	if n := roleCalls(h); n != calls || n != done {
		t.Errorf("%d role changes sent (%d when the message was final), want exactly %d", n, calls, done)
	}
}

// TestBulkRemoveWaitsAndFails takes Red from five members while Discord
// allows three changes per eight seconds (so the fourth waits long enough
// for a loaded machine's progress edit to show it) and one member leaves: the
// progress message shows the wait with its until-time, then the member
// who left as failed, by name and reason.
func TestBulkRemoveWaitsAndFails(t *testing.T) {
	t.Parallel()
	h := heraldtest.New(t, heraldtest.WithFixture(fixture(5, "Red")))
	if err := h.Sim.Server.SetLimits(sim.LimitChange{Route: "DELETE /guilds/{guild_id}/members/{user_id}/roles/{role_id}", Limit: 3, WindowMS: 8000}); err != nil {
		t.Fatal(err)
	}
	h.As("admin").Command("general", "/roles/bulk/remove", heraldtest.Opts{"role": h.Role("Red"), "members-with": h.Role("Blue")}).Ack()
	title := "Remove <@&" + h.Role("Red") + "> from every member with <@&" + h.Role("Blue") + ">"
	waiting := progress(t, h, title, func(m *discordgo.Message) bool { return strings.Contains(m.Content, "⏳ Waiting: member") })
	if !regexp.MustCompile(`⏳ Waiting: member00\d — Discord asked us to slow down, next try <t:\d+:R>`).MatchString(waiting.Content) {
		t.Errorf("waiting line:\n%s", waiting.Content)
	}
	req, err := http.NewRequest(http.MethodDelete, h.Sim.URL+"/_sim/guilds/"+h.Guild.ID+"/members/"+h.Member("member004"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode >= 300 {
		t.Fatalf("member004 leaving: %v %v", res, err)
	}
	final := progress(t, h, title, func(m *discordgo.Message) bool { return strings.Contains(m.Content, "**Finished:") })
	for _, want := range []string{"**Finished: 4 of 5 done, 1 failed.**", "❌ Failed — no longer there (left the server or deleted) (1): member004",
		"✅ Done (4): member000, member001, member002, member003"} {
		if !strings.Contains(final.Content, want) {
			t.Errorf("final message lacks %q:\n%s", want, final.Content)
		}
	}
	if n := withRole(h, "Red"); n != 0 {
		t.Errorf("%d members still have Red", n)
	}
}

// TestBulkRefused: a role above herald's own is refused before anything
// is done, and the progress message says why.
func TestBulkRefused(t *testing.T) {
	t.Parallel()
	h := heraldtest.New(t, heraldtest.WithFixture(fixture(3)))
	h.As("admin").Command("general", "/roles/bulk/add", heraldtest.Opts{"role": h.Role("Boss"), "members-with": h.Role("Blue")}).Ack()
	title := "Add <@&" + h.Role("Boss") + "> to every member with <@&" + h.Role("Blue") + ">"
	msg := progress(t, h, title, func(m *discordgo.Message) bool { return strings.Contains(m.Content, "Nothing was done") })
	if !strings.Contains(msg.Content, "Nothing was done: **Boss** is at or above herald's highest role") || len(msg.Components) != 0 {
		t.Errorf("refusal: %q, components %v", msg.Content, msg.Components)
	}
	if n := roleCalls(h); n != 0 {
		t.Errorf("%d role changes sent", n)
	}
}

// Without the Server Members intent Discord does not list a server's
// members: /roles bulk says so at once, names the intent and where to
// switch it on, and starts nothing.
func TestBulkNeedsServerMembers(t *testing.T) {
	t.Parallel()
	h := heraldtest.New(t, heraldtest.WithFixture(fixture(3)), heraldtest.WithApplicationFlags(0))
	r := h.As("admin").Command("general", "/roles/bulk/add", heraldtest.Opts{"role": h.Role("Red"), "members-with": h.Role("Blue")}).Reply()
	if !strings.Contains(r.Content, "Server Members Intent") || !strings.Contains(r.Content, "Privileged Gateway Intents") {
		t.Fatalf("answer %q", r.Content)
	}
	var actions int
	h.DB.QueryRow(t.Context(), "SELECT count(*) FROM bulk_actions").Scan(&actions)
	if actions != 0 || withRole(h, "Red") != 0 {
		t.Fatalf("%d actions started, %d members given the role", actions, withRole(h, "Red"))
	}
}

// finalMessage waits for a progress message headed by title that
// contains end, among all of them (several actions may share a title).
func finalMessage(t *testing.T, h *heraldtest.Herald, title, end string) string {
	t.Helper()
	var found string
	h.Eventually("a progress message of "+title+" with "+end, func() bool {
		for _, m := range h.Messages(h.Channel("general")) {
			if strings.HasPrefix(m.Content, "**"+title+"**") && strings.Contains(m.Content, end) {
				found = m.Content
				return true
			}
		}
		return false
	})
	return found
}

// A role with a dangerous permission (Helpers may manage threads, so it
// reads every private ticket thread) is handed out in bulk only when the
// server owner starts the action with allow-dangerous; an admin asking
// for it is refused, and nothing is changed until the owner does.
func TestBulkDangerousNeedsOwner(t *testing.T) {
	t.Parallel()
	h := heraldtest.New(t, heraldtest.WithFixture(fixture(3)))
	title := "Add <@&" + h.Role("Helpers") + "> to every member with <@&" + h.Role("Blue") + ">"
	opts := heraldtest.Opts{"role": h.Role("Helpers"), "members-with": h.Role("Blue")}
	h.As("admin").Command("general", "/roles/bulk/add", opts).Ack()
	finalMessage(t, h, title, "Nothing was done: **Helpers** has the dangerous permission **Manage Threads**; only the server owner can give or take it in bulk")
	opts["allow-dangerous"] = true
	h.As("admin").Command("general", "/roles/bulk/add", opts).Ack()
	finalMessage(t, h, title, "Nothing was done: only the server owner may start an action with `allow-dangerous`.")
	if n := roleCalls(h); n != 0 {
		t.Fatalf("%d role changes sent before the owner allowed it", n)
	}
	h.As("owner").Command("general", "/roles/bulk/add", opts).Ack()
	finalMessage(t, h, title, "**Finished: 3 of 3 done.**")
	if n := withRole(h, "Helpers"); n != 3 {
		t.Errorf("%d members have Helpers, want 3", n)
	}
}

// A run lasts as long as Discord's member-role limit makes it, so the
// role is checked again before every member's change, with data no older
// than a few seconds: when the role gains a dangerous permission, moves
// above herald, or the admin who started the action loses the rank to
// hand it out, the members not done yet fail with the reason, and no
// change Discord would refuse is sent (each refusal counts against
// herald's invalid-request budget).
func TestBulkRechecksEveryTask(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		change func(h *heraldtest.Herald)
		reason func(h *heraldtest.Herald) string
	}{
		{"role turns dangerous", func(h *heraldtest.Herald) {
			// An admin gives Red Manage Messages in Server Settings.
			perms := strconv.FormatInt(discordgo.PermissionManageMessages, 10)
			if res := h.Sim.Do(http.MethodPatch, "/guilds/"+h.Guild.ID+"/roles/"+h.Role("Red"), map[string]string{"permissions": perms}); res.Status != http.StatusOK {
				t.Fatalf("edit Red: %d %s", res.Status, res.Body)
			}
		}, func(*heraldtest.Herald) string { return "**Red** has the dangerous permission **Manage Messages**" }},
		{"role moved above herald", func(h *heraldtest.Herald) {
			h.Sim.MoveRole(h.Guild.ID, h.Role("Red"), 9)
		}, func(*heraldtest.Herald) string { return "**Red** is at or above herald's highest role" }},
		{"admin demoted", func(h *heraldtest.Herald) {
			h.Sim.SetMemberRole(h.Guild.ID, h.Member("admin"), h.Role("Admins"), false)
		}, func(h *heraldtest.Herald) string {
			return "**Red** is at or above the highest role of <@" + h.Member("admin") + ">, who started this action."
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := heraldtest.New(t, heraldtest.WithFixture(fixture(6)))
			// One change per 3 s: the second member's change waits longer
			// than a job holds its worker (work.MaxHold), so the runner
			// snoozes, and the change is made after it.
			if err := h.Sim.Server.SetLimits(sim.LimitChange{Route: memberRoleRoute, Limit: 1, WindowMS: 3000}); err != nil {
				t.Fatal(err)
			}
			h.As("admin").Command("general", "/roles/bulk/add", heraldtest.Opts{"role": h.Role("Red"), "members-with": h.Role("Blue")}).Ack()
			h.Eventually("the first member to get Red", func() bool { return withRole(h, "Red") > 0 })
			tc.change(h)
			title := "Add <@&" + h.Role("Red") + "> to every member with <@&" + h.Role("Blue") + ">"
			final := finalMessage(t, h, title, "**Finished:")
			t.Logf("the progress message at the end:\n%s", final)
			if !strings.Contains(final, "**Finished: 1 of 6 done, 5 failed.**") || !strings.Contains(final, "❌ Failed — "+tc.reason(h)) {
				t.Fatalf("want the 5 members left failed with %q:\n%s", tc.reason(h), final)
			}
			if n := withRole(h, "Red"); n != 1 || roleCalls(h) != 1 {
				t.Errorf("%d members have Red, %d changes sent; want the first only", n, roleCalls(h))
			}
			for _, r := range h.Sim.Server.Requests() {
				if r.Method+" "+r.Route == memberRoleRoute && r.Status != http.StatusNoContent {
					t.Errorf("a role change Discord refused: %d", r.Status)
				}
			}
		})
	}
}
