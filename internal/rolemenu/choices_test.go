package rolemenu_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/heraldtest"
)

// A style or mode outside the declared choices (a client with an
// outdated command list, a forged request) is refused naming the allowed
// values, in the admin's language, and changes nothing.
func TestRoleMenuBadChoice(t *testing.T) {
	t.Parallel()
	h := heraldtest.New(t, heraldtest.WithFixture(fixture()))
	admin := h.As("admin")
	for _, tc := range []struct {
		path string
		opts heraldtest.Opts
		want string
	}{
		{"/rolemenu/create", heraldtest.Opts{"name": "colours", "style": "grid"}, "**grid** is not one of the choices here: use `buttons`, `select`. Nothing was changed."},
		{"/rolemenu/create", heraldtest.Opts{"name": "colours", "mode": "random"}, "**random** is not one of the choices here: use `toggle`, `unique`, `verify`, `drop`. Nothing was changed."},
	} {
		if r := admin.Command("general", tc.path, tc.opts).Reply(); r.Content != tc.want {
			t.Errorf("%s %v: %q, want %q", tc.path, tc.opts, r.Content, tc.want)
		}
	}
	if r := admin.Command("general", "/rolemenu/list", nil).Reply(); !strings.Contains(r.Content, "no role menus") {
		t.Errorf("a refused create made a menu: %q", r.Content)
	}

	admin.Command("general", "/rolemenu/create", heraldtest.Opts{"name": "colours", "mode": "unique"}).Reply()
	if r := admin.Locale("de").Command("general", "/rolemenu/set/mode", heraldtest.Opts{"menu": "colours", "mode": "random"}).Reply(); !strings.Contains(r.Content, "**random** steht hier nicht zur Auswahl: nimm `toggle`, `unique`, `verify`, `drop`.") {
		t.Errorf("set mode random, in German: %q", r.Content)
	}
	if r := admin.Command("general", "/rolemenu/list", nil).Reply(); !strings.Contains(r.Content, "**colours** — buttons, unique") {
		t.Errorf("a refused mode changed the menu: %q", r.Content)
	}
}

// The menu autocomplete offers the guild's menus whose name holds what
// was typed, with the name as the value; a LIKE wildcard typed is taken
// literally.
func TestRoleMenuAutocomplete(t *testing.T) {
	t.Parallel()
	h := heraldtest.New(t, heraldtest.WithFixture(fixture()))
	admin := h.As("admin")
	for _, name := range []string{"topics", "colours", "pings"} {
		admin.Command("general", "/rolemenu/create", heraldtest.Opts{"name": name}).Reply()
	}
	for typed, want := range map[string][]sim.Choice{
		"co": {{Name: "colours", Value: "colours"}},
		"":   {{Name: "colours", Value: "colours"}, {Name: "pings", Value: "pings"}, {Name: "topics", Value: "topics"}},
		"%":  nil,
	} {
		st := admin.Autocomplete("general", "/rolemenu/option/add", "menu", typed, heraldtest.Opts{"role": h.Role("Red")}).Ack()
		if st.AckType != 8 || !slices.Equal(st.Choices, want) {
			t.Errorf("typing %q: answered %d with %v, want %v", typed, st.AckType, st.Choices, want)
		}
	}
}
