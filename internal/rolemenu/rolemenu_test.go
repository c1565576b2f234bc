package rolemenu_test

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/heraldtest"
	"github.com/herald-bot/herald/internal/interaction"
	"github.com/herald-bot/herald/internal/testsupport/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// fixture: an Admins role that may manage roles, colour roles below the
// bot, a dangerous Staff role below it, and a Boss role above it.
func fixture() sim.Fixture {
	f := sim.DefaultFixture()
	f.Roles = append(f.Roles,
		sim.FixtureRole{Name: "Admins", Permissions: strconv.FormatInt(discordgo.PermissionManageRoles, 10), Position: 9},
		sim.FixtureRole{Name: "Red", Permissions: "0", Position: 5},
		sim.FixtureRole{Name: "Blue", Permissions: "0", Position: 6},
		sim.FixtureRole{Name: "Staff", Permissions: strconv.FormatInt(discordgo.PermissionBanMembers, 10), Position: 7},
		sim.FixtureRole{Name: "Boss", Permissions: "0", Position: 12},
	)
	f.BotRole = &sim.FixtureRole{Name: "herald", Position: 8}
	f.Members = append(f.Members, sim.FixtureMember{Username: "admin", Roles: []string{"Admins"}},
		sim.FixtureMember{Username: "erin"}, sim.FixtureMember{Username: "frank", Roles: []string{"News"}})
	return f
}

func roles(h *heraldtest.Herald, username string) []string {
	h.Sim.Guild(h.Guild.ID)
	for _, m := range h.Sim.Guild(h.Guild.ID).Members {
		if m.ID == h.Member(username) {
			return m.Roles
		}
	}
	return nil
}

func hasRole(h *heraldtest.Herald, username, role string) bool {
	return slices.Contains(roles(h, username), h.Role(role))
}

// menuMessage waits for the menu's message in channel with n components.
func menuMessage(t *testing.T, h *heraldtest.Herald, channel, title string, check func(*discordgo.Message) bool) *discordgo.Message {
	t.Helper()
	var found *discordgo.Message
	h.Eventually("the menu "+title+" in #"+channel, func() bool {
		for _, m := range h.Messages(h.Channel(channel)) {
			if strings.HasPrefix(m.Content, "**"+title+"**") && (check == nil || check(m)) {
				found = m
				return true
			}
		}
		return false
	})
	return found
}

// An admin sets up a menu in five commands; the refusals name the role
// and the reason and change nothing; members toggle roles with replies in
// their language; quick edits make one message edit; a deleted message
// shows in the status until republished.
func TestRoleMenuEndToEnd(t *testing.T) {
	t.Parallel()
	h := heraldtest.New(t, heraldtest.WithFixture(fixture()))
	admin := h.As("admin")

	if r := admin.Command("general", "/rolemenu/create", heraldtest.Opts{"name": "colours", "description": "Pick a colour"}).Reply(); !strings.Contains(r.Content, "Created") {
		t.Fatalf("create: %q", r.Content)
	}
	if r := admin.Command("general", "/rolemenu/create", heraldtest.Opts{"name": "colours"}).Reply(); !strings.Contains(r.Content, "already a menu") {
		t.Errorf("second create: %q", r.Content)
	}
	for _, role := range []string{"Red", "Blue"} {
		if r := admin.Command("general", "/rolemenu/option/add", heraldtest.Opts{"menu": "colours", "role": h.Role(role)}).Reply(); !strings.Contains(r.Content, "now offers") {
			t.Fatalf("add %s: %q", role, r.Content)
		}
	}
	for _, tc := range []struct{ role, want string }{
		{h.Guild.ID, "@everyone"},
		{h.Role("Boss"), "herald's highest role"},
		{h.Role("Staff"), "**Ban Members**"},
		{h.Guild.BotRoleID, "managed by an integration"},
	} {
		r := admin.Command("general", "/rolemenu/option/add", heraldtest.Opts{"menu": "colours", "role": tc.role}).Reply()
		if !strings.Contains(r.Content, tc.want) || !strings.Contains(r.Content, "Nothing was changed") {
			t.Errorf("adding role %s: %q, want %q", tc.role, r.Content, tc.want)
		}
	}
	if r := admin.Command("general", "/rolemenu/publish", heraldtest.Opts{"menu": "colours", "channel": h.Channel("roles")}).Reply(); !strings.Contains(r.Content, "Publishing") {
		t.Fatalf("publish: %q", r.Content)
	}
	msg := menuMessage(t, h, "roles", "colours", func(m *discordgo.Message) bool { return len(interaction.Buttons(m)) == 2 })

	// Members click: toggle on, toggle off, in their language.
	if r := h.As("bob").Click(msg, heraldtest.Button(t, msg, "Red")).Reply(); !strings.Contains(r.Content, "Added: <@&"+h.Role("Red")+">") {
		t.Errorf("bob's first click: %q", r.Content)
	}
	if !hasRole(h, "bob", "Red") {
		t.Error("bob did not get Red")
	}
	if r := h.As("bob").Locale("de").Click(msg, heraldtest.Button(t, msg, "Red")).Reply(); !strings.Contains(r.Content, "<@&"+h.Role("Red")+">") || strings.Contains(r.Content, "Removed") {
		t.Errorf("bob's second click (German): %q", r.Content)
	}
	if hasRole(h, "bob", "Red") {
		t.Error("bob still has Red after toggling it off")
	}
	// Each click's payload carried bob's roles: herald never read him,
	// and changed his role twice.
	bob := "/guilds/" + h.Guild.ID + "/members/" + h.Member("bob")
	changes := 0
	for _, r := range h.Sim.Server.Requests() {
		switch {
		case r.Method == http.MethodGet && r.Path == bob:
			t.Errorf("bob was read (%s %s): the clicks' payloads had his roles", r.Method, r.Path)
		case r.Path == bob+"/roles/"+h.Role("Red"):
			changes++
		}
	}
	if changes != 2 {
		t.Errorf("%d changes of bob's Red role, want 2", changes)
	}

	// Ten quick edits: one message edit, showing the last. A publish runs
	// a second after the first edit asking for it and takes every edit
	// until then, so on a machine slow enough to spread the ten over more
	// than a second, one more for each second they took.
	edits := h.Requests(http.MethodPatch, "/channels/{channel_id}/messages/{message_id}")
	start := time.Now()
	for i := range 10 {
		admin.Command("general", "/rolemenu/option/edit", heraldtest.Opts{"menu": "colours", "role": h.Role("Red"), "label": "Red " + strconv.Itoa(i)}).Reply()
	}
	span := time.Since(start)
	msg = menuMessage(t, h, "roles", "colours", func(m *discordgo.Message) bool {
		return slices.ContainsFunc(interaction.Buttons(m), func(b discordgo.Button) bool { return b.Label == "Red 9" })
	})
	if n, most := h.Requests(http.MethodPatch, "/channels/{channel_id}/messages/{message_id}")-edits, 1+int(span/time.Second); n < 1 || n > most {
		t.Errorf("ten edits over %s made %d message edits, want 1 to %d", span, n, most)
	}

	// The message is deleted: status says so, nothing is recreated, and
	// republish brings it back.
	if res := h.Sim.Do(http.MethodDelete, "/channels/"+msg.ChannelID+"/messages/"+msg.ID, nil); res.Status != http.StatusNoContent {
		t.Fatalf("delete: %d", res.Status)
	}
	h.Eventually("status to show the deleted message", func() bool {
		return strings.Contains(admin.Command("general", "/rolemenu/status", nil).Reply().Content, "message was deleted")
	})
	admin.Command("general", "/rolemenu/option/edit", heraldtest.Opts{"menu": "colours", "role": h.Role("Blue"), "label": "Navy"}).Reply()
	if r := admin.Command("general", "/rolemenu/republish", heraldtest.Opts{"menu": "colours"}).Reply(); !strings.Contains(r.Content, "again") {
		t.Fatalf("republish: %q", r.Content)
	}
	msg = menuMessage(t, h, "roles", "colours", func(m *discordgo.Message) bool { return m.ID != msg.ID })
	if got := len(h.Messages(h.Channel("roles"))); got != 1 {
		t.Errorf("%d messages in #roles after republish, want 1", got)
	}
	h.Eventually("status to show the menu published", func() bool {
		return strings.Contains(admin.Command("general", "/rolemenu/status", nil).Reply().Content, "published")
	})
}
