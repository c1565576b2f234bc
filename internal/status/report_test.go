package status_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/heraldtest"
)

// statusAs runs /herald status as admin and returns the reply. Each
// admin asks once: the command has a cooldown per member.
func statusAs(t *testing.T, h *heraldtest.Herald, admin string) string {
	t.Helper()
	return h.As(admin).Command("general", "/herald/status", nil).Reply().Content
}

func count(t *testing.T, h *heraldtest.Herald, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := h.DB.QueryRow(t.Context(), sql, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// /herald status end to end: a role menu herald may not post shows as
// failed with the missing permission and the fix, and in the menus not
// yet visible; once the admin grants the permission and republishes, both
// clear. A message edit Discord answers 429 shows as waiting until the
// time Discord named, and clears once published. The transport section
// counts the invalid request the refusal cost.
func TestStatusShowsWaitingAndFailedUntilFixed(t *testing.T) {
	t.Parallel()
	f := sim.DefaultFixture()
	f.Roles = append(f.Roles,
		sim.FixtureRole{Name: "Admin", Permissions: strconv.FormatInt(discordgo.PermissionManageGuild|discordgo.PermissionManageRoles, 10), Position: 9},
		sim.FixtureRole{Name: "Red", Permissions: "0", Position: 2},
		sim.FixtureRole{Name: "Poster", Permissions: strconv.FormatInt(discordgo.PermissionSendMessages|discordgo.PermissionEmbedLinks, 10), Position: 3},
	)
	// herald may see channels and manage roles, but not send messages
	// (nor may @everyone).
	f.Everyone = strconv.FormatInt(discordgo.PermissionViewChannel|discordgo.PermissionReadMessageHistory|discordgo.PermissionUseApplicationCommands, 10)
	f.BotRole = &sim.FixtureRole{Name: "herald", Position: 8,
		Permissions: strconv.FormatInt(discordgo.PermissionManageRoles|discordgo.PermissionViewChannel|discordgo.PermissionReadMessageHistory, 10)}
	for _, a := range []string{"ada", "ben", "cy", "dee"} {
		f.Members = append(f.Members, sim.FixtureMember{Username: a, Roles: []string{"Admin"}})
	}
	h := heraldtest.New(t, heraldtest.WithFixture(f))
	ada := h.As("ada")
	ada.Command("general", "/rolemenu/create", heraldtest.Opts{"name": "colours"}).Reply()
	ada.Command("general", "/rolemenu/option/add", heraldtest.Opts{"menu": "colours", "role": h.Role("Red")}).Reply()
	ada.Command("general", "/rolemenu/publish", heraldtest.Opts{"menu": "colours", "channel": h.Channel("roles")}).Reply()
	h.Eventually("the publish to fail for a permission", func() bool {
		return count(t, h, `SELECT count(*) FROM river_job WHERE kind = 'rolemenu_publish' AND state = 'cancelled'
			AND metadata->'output'->>'reason' = 'needs_permission'`) == 1
	})

	failed := statusAs(t, h, "ada")
	for _, want := range []string{
		"**Could not be done** (last 24 h)",
		"Role menu messages (1): herald is missing a permission. Fix: give herald's role the permission",
		"**Not yet visible as saved**", "**colours**",
		"1 of 7000 invalid requests used", // the bot's share of herald's 9,000, below Discord's 10,000
		"herald processes on the bot's token: 1, this one sending at most 50 requests a second", "gateway shards 0", "Discord buckets held ",
		"`sync`: 0 · 0 · 0 · 1",
	} {
		if !strings.Contains(failed, want) {
			t.Errorf("status with a failed publish lacks %q:\n%s", want, failed)
		}
	}

	// The admin gives herald's role what it lacked and republishes.
	h.Sim.SetMemberRole(h.Guild.ID, h.Guild.BotUserID, h.Role("Poster"), true)
	ada.Command("general", "/rolemenu/republish", heraldtest.Opts{"menu": "colours"}).Reply()
	h.Eventually("the menu published", func() bool { return len(h.Messages(h.Channel("roles"))) == 1 })
	h.Eventually("the republish done", func() bool {
		return count(t, h, `SELECT count(*) FROM river_job WHERE kind = 'rolemenu_publish' AND state = 'completed'`) == 1
	})
	fixed := statusAs(t, h, "ben")
	if !strings.Contains(fixed, "Nothing is waiting or failed.") || strings.Contains(fixed, "Could not be done") || strings.Contains(fixed, "colours") {
		t.Errorf("status after the fix:\n%s", fixed)
	}

	// Discord lowers the edit limit: the next edit waits for its window.
	const edit = "/channels/{channel_id}/messages/{message_id}"
	ada.Command("general", "/rolemenu/option/edit", heraldtest.Opts{"menu": "colours", "role": h.Role("Red"), "label": "Red 1"}).Reply()
	h.Eventually("the first edit", func() bool {
		return count(t, h, `SELECT count(*) FROM sync_targets WHERE target LIKE 'rolemenu:%' AND published_revision = saved_revision`) == 1 &&
			edits(h, edit) == 1
	})
	h.Sim.SetLimits(sim.LimitChange{Route: http.MethodPatch + " " + edit, Limit: 1, WindowMS: (8 * time.Second).Milliseconds()})
	ada.Command("general", "/rolemenu/option/edit", heraldtest.Opts{"menu": "colours", "role": h.Role("Red"), "label": "Red 2"}).Reply()
	h.Eventually("the publish to wait for Discord", func() bool {
		return count(t, h, `SELECT count(*) FROM river_job WHERE kind = 'rolemenu_publish' AND scheduled_at > now()
			AND metadata->'output'->>'reason' = 'rate_limited'`) == 1
	})
	waiting := statusAs(t, h, "cy")
	for _, want := range []string{"**Waiting**", "Role menu messages (1): Discord asked to slow down, until <t:", ":R>", "waiting until <t:"} {
		if !strings.Contains(waiting, want) {
			t.Errorf("status while rate limited lacks %q:\n%s", want, waiting)
		}
	}
	h.Eventually("the edit made after the wait", func() bool {
		return count(t, h, `SELECT count(*) FROM river_job WHERE kind = 'rolemenu_publish' AND state NOT IN ('completed', 'cancelled')`) == 0
	})
	if after := statusAs(t, h, "dee"); !strings.Contains(after, "Nothing is waiting or failed.") {
		t.Errorf("status after the wait:\n%s", after)
	}
}

func edits(h *heraldtest.Herald, route string) int {
	n := 0
	for _, r := range h.Sim.Server.Requests() {
		if r.Method == http.MethodPatch && r.Route == route && r.Status == http.StatusOK {
			n++
		}
	}
	return n
}
