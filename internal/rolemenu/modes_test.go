package rolemenu_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/heraldtest"
)

func selectMenu(m *discordgo.Message) *discordgo.SelectMenu {
	for _, row := range m.Components {
		if r, ok := row.(*discordgo.ActionsRow); ok {
			for _, c := range r.Components {
				if s, ok := c.(*discordgo.SelectMenu); ok {
					return s
				}
			}
		}
	}
	return nil
}

// setup creates a menu with roles and publishes it in #roles.
func setup(t *testing.T, h *heraldtest.Herald, name string, opts heraldtest.Opts, roleNames ...string) *discordgo.Message {
	t.Helper()
	admin := h.As("admin")
	opts["name"] = name
	admin.Command("general", "/rolemenu/create", opts).Reply()
	for _, r := range roleNames {
		if got := admin.Command("general", "/rolemenu/option/add", heraldtest.Opts{"menu": name, "role": h.Role(r)}).Reply(); !strings.Contains(got.Content, "now offers") {
			t.Fatalf("add %s: %q", r, got.Content)
		}
	}
	admin.Command("general", "/rolemenu/publish", heraldtest.Opts{"menu": name, "channel": h.Channel("roles")}).Reply()
	return menuMessage(t, h, "roles", name, nil)
}

// A select in unique mode takes one role; linked button menus share the
// group; verify only adds; the required and blocked roles gate the menu;
// a removed option answers that it no longer exists; autocomplete and
// list show the menus; only the owner may allow dangerous roles.
func TestRoleMenuModesAndRules(t *testing.T) {
	t.Parallel()
	h := heraldtest.New(t, heraldtest.WithFixture(fixture()))
	admin := h.As("admin")

	colours := setup(t, h, "colours", heraldtest.Opts{"style": "select", "mode": "unique"}, "Red", "Blue")
	sel := selectMenu(colours)
	if sel == nil || len(sel.Options) != 2 || sel.MaxValues != 1 {
		t.Fatalf("select = %+v, want 2 options, at most 1 pick", sel)
	}
	valueOf := func(label string) string {
		for _, o := range sel.Options {
			if o.Label == label {
				return o.Value
			}
		}
		t.Fatalf("no option %s", label)
		return ""
	}
	h.As("erin").Select(colours, sel.CustomID, valueOf("Red")).Reply()
	h.As("erin").Select(colours, sel.CustomID, valueOf("Blue")).Reply()
	h.Eventually("erin to end with Blue only", func() bool { return hasRole(h, "erin", "Blue") && !hasRole(h, "erin", "Red") })
	if r := h.As("erin").Select(colours, sel.CustomID, valueOf("Red"), valueOf("Blue")).Reply(); !strings.Contains(r.Content, "Pick between 0 and 1") {
		t.Errorf("two picks in a unique select answered %q, want a refusal", r.Content)
	}
	if !hasRole(h, "erin", "Blue") || hasRole(h, "erin", "Red") {
		t.Error("a refused pick changed erin's roles")
	}

	// A linked button menu shares the unique group: Gaming drops Blue.
	topics := setup(t, h, "topics", heraldtest.Opts{"mode": "unique"}, "Gaming")
	if r := admin.Command("general", "/rolemenu/set/link", heraldtest.Opts{"menu": "topics", "with": "colours"}).Reply(); !strings.Contains(r.Content, "share one group") {
		t.Fatalf("link: %q", r.Content)
	}
	h.As("erin").Click(topics, heraldtest.Button(t, topics, "Gaming")).Reply()
	h.Eventually("Gaming to replace Blue", func() bool { return hasRole(h, "erin", "Gaming") && !hasRole(h, "erin", "Blue") })

	// verify only adds.
	rules := setup(t, h, "rules", heraldtest.Opts{"mode": "verify"}, "News")
	if r := h.As("frank").Click(rules, heraldtest.Button(t, rules, "News")).Reply(); !strings.Contains(r.Content, "Nothing changed") || !hasRole(h, "frank", "News") {
		t.Errorf("verify click by a member who has the role: %q", r.Content)
	}

	// Required and blocked roles, answered by the click job, changing nothing.
	admin.Command("general", "/rolemenu/set/required-role", heraldtest.Opts{"menu": "rules", "role": h.Role("Events")}).Reply()
	if r := h.As("dave").Click(rules, heraldtest.Button(t, rules, "News")).Reply(); !strings.Contains(r.Content, "You need <@&"+h.Role("Events")+">") {
		t.Errorf("without the required role: %q", r.Content)
	}
	admin.Command("general", "/rolemenu/set/required-role", heraldtest.Opts{"menu": "rules"}).Reply()
	admin.Command("general", "/rolemenu/set/blocked-role", heraldtest.Opts{"menu": "rules", "role": h.Role("Moderator"), "blocked": true}).Reply()
	if r := h.As("alice").Click(rules, heraldtest.Button(t, rules, "News")).Reply(); !strings.Contains(r.Content, "cannot use this menu") {
		t.Errorf("with a blocked role: %q", r.Content)
	}
	if hasRole(h, "alice", "News") || hasRole(h, "dave", "News") {
		t.Error("a refused click changed roles")
	}

	// An option removed since publishing.
	old := heraldtest.Button(t, topics, "Gaming")
	admin.Command("general", "/rolemenu/option/remove", heraldtest.Opts{"menu": "topics", "role": h.Role("Gaming")}).Reply()
	if r := h.As("erin").Click(topics, old).Reply(); !strings.Contains(r.Content, "no longer exists") {
		t.Errorf("a removed option: %q", r.Content)
	}

	// Autocomplete, list, and the owner's switch.
	if st := admin.Autocomplete("general", "/rolemenu/publish", "menu", "co", heraldtest.Opts{"channel": h.Channel("roles")}).Ack(); st.AckType != int(discordgo.InteractionApplicationCommandAutocompleteResult) {
		t.Errorf("autocomplete answered %d", st.AckType)
	}
	if r := admin.Command("general", "/rolemenu/list", nil).Reply(); strings.Count(r.Content, "\n") != 2 || !strings.Contains(r.Content, "**rules**") {
		t.Errorf("list: %q", r.Content)
	}
	if r := admin.Command("general", "/rolemenu/set/dangerous-roles", heraldtest.Opts{"allow": true}).Reply(); !strings.Contains(r.Content, "Only the server owner") {
		t.Errorf("an admin allowing dangerous roles: %q", r.Content)
	}
	if r := h.As("owner").Command("general", "/rolemenu/set/dangerous-roles", heraldtest.Opts{"allow": true}).Reply(); !strings.Contains(r.Content, "may now offer") {
		t.Errorf("the owner allowing dangerous roles: %q", r.Content)
	}
	if r := admin.Command("general", "/rolemenu/option/add", heraldtest.Opts{"menu": "rules", "role": h.Role("Staff")}).Reply(); !strings.Contains(r.Content, "now offers") {
		t.Errorf("a dangerous role once allowed: %q", r.Content)
	}

	// The channel is deleted: the status names it and the fix.
	if res := h.Sim.Do(http.MethodDelete, "/channels/"+h.Channel("roles"), nil); res.Status != http.StatusOK {
		t.Fatalf("delete channel: %d", res.Status)
	}
	h.Eventually("status to show the deleted channel", func() bool {
		return strings.Contains(admin.Command("general", "/rolemenu/status", nil).Reply().Content, "channel was deleted")
	})
}

// Deleting a menu removes its configuration and its message, even one
// its publish job is still posting.
func TestRoleMenuDelete(t *testing.T) {
	t.Parallel()
	h := heraldtest.New(t, heraldtest.WithFixture(fixture()))
	setup(t, h, "pings", heraldtest.Opts{}, "News")
	if r := h.As("admin").Command("general", "/rolemenu/delete", heraldtest.Opts{"menu": "pings"}).Reply(); !strings.Contains(r.Content, "Deleted") {
		t.Fatalf("delete: %q", r.Content)
	}
	h.Eventually("the menu's message to go", func() bool { return len(h.Messages(h.Channel("roles"))) == 0 })
	if r := h.As("admin").Command("general", "/rolemenu/list", nil).Reply(); !strings.Contains(r.Content, "no role menus") {
		t.Errorf("list after delete: %q", r.Content)
	}
}
