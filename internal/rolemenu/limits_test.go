package rolemenu_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/heraldtest"
	"github.com/herald-bot/herald/internal/interaction"
)

// longName is a role name of 100 characters, Discord's most, with
// letters of two bytes: a cut by bytes would show.
var longName = string([]rune(strings.Repeat("Ordre très ancien des gardiens de la licorne ", 3))[:100])

// limitsFixture adds the long-named role and 25 tags below the bot.
func limitsFixture() sim.Fixture {
	f := fixture()
	f.Roles = append(f.Roles, sim.FixtureRole{Name: longName, Permissions: "0", Position: 1})
	for i := 1; i <= 25; i++ {
		f.Roles = append(f.Roles, sim.FixtureRole{Name: fmt.Sprintf("Tag%02d", i), Permissions: "0", Position: 1})
	}
	return f
}

// publishJobsDone waits until no publish job is queued or running: what
// the last change requested has been done (or refused).
func publishJobsDone(t *testing.T, h *heraldtest.Herald) {
	t.Helper()
	h.Eventually("the publish jobs to finish", func() bool {
		var n int
		if err := h.DB.QueryRow(t.Context(), `SELECT count(*) FROM river_job WHERE kind = 'rolemenu_publish'
			AND state NOT IN ('completed', 'cancelled', 'discarded')`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n == 0
	})
}

func label(t *testing.T, h *heraldtest.Herald, role string) string {
	t.Helper()
	var l string
	if err := h.DB.QueryRow(t.Context(), `SELECT label FROM rolemenu_options WHERE role_id = $1`, h.Role(role)).Scan(&l); err != nil {
		t.Fatal(err)
	}
	return l
}

// A button menu holds what Discord allows and no more: a role's
// 100-character name shows as an 80-character label; 25 roles make 5
// rows of 5 buttons and a 26th is refused; a label or description longer
// than Discord shows is refused, and nothing changes.
func TestRoleMenuButtonLimits(t *testing.T) {
	t.Parallel()
	h := heraldtest.New(t, heraldtest.WithFixture(limitsFixture()))
	admin := h.As("admin")
	admin.Command("general", "/rolemenu/create", heraldtest.Opts{"name": "tags"}).Reply()
	for _, r := range append([]string{longName}, func() []string {
		var tags []string
		for i := 1; i <= 24; i++ {
			tags = append(tags, fmt.Sprintf("Tag%02d", i))
		}
		return tags
	}()...) {
		if got := admin.Command("general", "/rolemenu/option/add", heraldtest.Opts{"menu": "tags", "role": h.Role(r)}).Reply(); !strings.Contains(got.Content, "now offers") {
			t.Fatalf("add %s: %q", r, got.Content)
		}
	}
	if r := admin.Command("general", "/rolemenu/option/add", heraldtest.Opts{"menu": "tags", "role": h.Role("Tag25")}).Reply(); !strings.Contains(r.Content, "already offers 25 roles") || !strings.Contains(r.Content, "Nothing was changed") {
		t.Errorf("a 26th role: %q", r.Content)
	}
	admin.Command("general", "/rolemenu/publish", heraldtest.Opts{"menu": "tags", "channel": h.Channel("roles")}).Reply()
	msg := menuMessage(t, h, "roles", "tags", nil)

	if len(msg.Components) != 5 {
		t.Errorf("%d rows, want 5", len(msg.Components))
	}
	for i, row := range msg.Components {
		if n := len(row.(*discordgo.ActionsRow).Components); n != 5 {
			t.Errorf("row %d has %d buttons, want 5", i, n)
		}
	}
	b := interaction.Buttons(msg)
	// Cut to 80 characters, "…" included; the 80th is a space, which
	// goes too.
	want := strings.TrimRight(string([]rune(longName)[:79]), " ") + "…"
	if b[0].Label != want {
		t.Errorf("the long role's button: %q (%d characters), want %q", b[0].Label, utf8.RuneCountInString(b[0].Label), want)
	}
	for _, x := range b {
		if utf8.RuneCountInString(x.Label) > 80 {
			t.Errorf("button label over 80 characters: %q", x.Label)
		}
	}

	// Labels and descriptions beyond Discord's limits, as a client with an
	// outdated command list would send them: refused, nothing saved.
	long81, long101 := strings.Repeat("x", 81), strings.Repeat("y", 101)
	for _, tc := range []struct {
		path string
		opts heraldtest.Opts
		want string
	}{
		{"/rolemenu/option/edit", heraldtest.Opts{"menu": "tags", "role": h.Role("Tag01"), "label": long81},
			"A label can have at most 80 characters, Discord's limit for a button; this one has 81. Nothing was changed."},
		{"/rolemenu/option/edit", heraldtest.Opts{"menu": "tags", "role": h.Role("Tag01"), "description": long101},
			"A role's description can have at most 100 characters, Discord's limit; this one has 101. Nothing was changed."},
		{"/rolemenu/option/add", heraldtest.Opts{"menu": "tags", "role": h.Role("Tag25"), "label": long81},
			"A label can have at most 80 characters, Discord's limit for a button; this one has 81. Nothing was changed."},
	} {
		if r := admin.Command("general", tc.path, tc.opts).Reply(); r.Content != tc.want {
			t.Errorf("%s %v: %q, want %q", tc.path, tc.opts, r.Content, tc.want)
		}
	}
	if l := label(t, h, "Tag01"); l != "Tag01" {
		t.Errorf("a refused edit saved the label %q", l)
	}
	if r := admin.Command("general", "/rolemenu/option/edit", heraldtest.Opts{"menu": "tags", "role": h.Role("Tag01"), "label": strings.Repeat("z", 80)}).Reply(); !strings.Contains(r.Content, "Updated") {
		t.Errorf("an 80-character label: %q", r.Content)
	}
	menuMessage(t, h, "roles", "tags", func(m *discordgo.Message) bool { return interaction.Buttons(m)[1].Label == strings.Repeat("z", 80) })
}

// A menu with no options is never sent: publishing an empty menu is
// refused; a select's max_values follows the options left, whatever the
// saved maximum; when the last option goes, herald sends no edit, the
// message keeps its last good revision, and both status views say why
// until a role is added again.
func TestRoleMenuNeverEmpty(t *testing.T) {
	t.Parallel()
	h := heraldtest.New(t, heraldtest.WithFixture(limitsFixture()))
	admin := h.As("admin")

	admin.Command("general", "/rolemenu/create", heraldtest.Opts{"name": "empty"}).Reply()
	if r := admin.Command("general", "/rolemenu/publish", heraldtest.Opts{"menu": "empty", "channel": h.Channel("roles")}).Reply(); !strings.Contains(r.Content, "has no roles yet") || !strings.Contains(r.Content, "Nothing was changed") {
		t.Errorf("publishing an empty menu: %q", r.Content)
	}
	if r := admin.Command("general", "/rolemenu/list", nil).Reply(); !strings.Contains(r.Content, "**empty** — buttons, toggle, 0 roles, not published") {
		t.Errorf("after the refused publish: %q", r.Content)
	}

	admin.Command("general", "/rolemenu/create", heraldtest.Opts{"name": "colours", "style": "select"}).Reply()
	for _, r := range []string{"Red", "Blue", longName} {
		admin.Command("general", "/rolemenu/option/add", heraldtest.Opts{"menu": "colours", "role": h.Role(r)}).Reply()
	}
	admin.Command("general", "/rolemenu/set/picks", heraldtest.Opts{"menu": "colours", "max": 5}).Reply()
	admin.Command("general", "/rolemenu/publish", heraldtest.Opts{"menu": "colours", "channel": h.Channel("roles")}).Reply()
	msg := menuMessage(t, h, "roles", "colours", nil)
	if sel := selectMenu(msg); sel == nil || len(sel.Options) != 3 || sel.MaxValues != 3 || sel.Options[2].Label != longName {
		t.Fatalf("published select %+v: want 3 options, max_values 3, the long name whole (a select option takes 100)", sel)
	}
	for _, r := range []string{longName, "Blue"} {
		admin.Command("general", "/rolemenu/option/remove", heraldtest.Opts{"menu": "colours", "role": h.Role(r)}).Reply()
	}
	msg = menuMessage(t, h, "roles", "colours", func(m *discordgo.Message) bool { return len(selectMenu(m).Options) == 1 })
	if sel := selectMenu(msg); sel.MaxValues != 1 {
		t.Errorf("one option left, max_values %d", sel.MaxValues)
	}
	publishJobsDone(t, h)

	edits := h.Requests(http.MethodPatch, "/channels/{channel_id}/messages/{message_id}")
	if r := admin.Command("general", "/rolemenu/option/remove", heraldtest.Opts{"menu": "colours", "role": h.Role("Red")}).Reply(); !strings.Contains(r.Content, "no roles left") {
		t.Errorf("removing the last option: %q", r.Content)
	}
	publishJobsDone(t, h)
	if n := h.Requests(http.MethodPatch, "/channels/{channel_id}/messages/{message_id}") - edits; n != 0 {
		t.Errorf("removing the last option sent %d message edits, want none", n)
	}
	if sel := selectMenu(menuMessage(t, h, "roles", "colours", nil)); len(sel.Options) != 1 || sel.Options[0].Label != "Red" {
		t.Errorf("the message no longer shows its last good revision: %+v", sel)
	}
	want := "not publishable: it has no options"
	if s := status(h); !strings.Contains(s, "**colours** — saved revision") || !strings.Contains(s, want) {
		t.Errorf("/rolemenu status: %q, want %q", s, want)
	}
	if s := h.As("owner").Command("general", "/herald/status", nil).Reply().Content; !strings.Contains(s, want) {
		t.Errorf("/herald status: %q, want %q", s, want)
	}

	admin.Command("general", "/rolemenu/option/add", heraldtest.Opts{"menu": "colours", "role": h.Role("Blue")}).Reply()
	menuMessage(t, h, "roles", "colours", func(m *discordgo.Message) bool {
		sel := selectMenu(m)
		return len(sel.Options) == 1 && sel.Options[0].Label == "Blue" && sel.MaxValues == 1
	})
	h.Eventually("status to show the menu published", func() bool {
		s := status(h)
		return strings.Contains(s, "**colours**") && strings.Contains(s, ": published")
	})
}
