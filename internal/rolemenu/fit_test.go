package rolemenu

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"
)

// Texts are cut to Discord's limit in characters, not bytes, "…"
// included, at a clean place: never between a letter and its marks or
// inside a joined emoji, never leaving a space before the "…".
func TestFit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in string
		n        int
		want     string
	}{
		{"fits", "Red", 80, "Red"},
		{"exactly", strings.Repeat("a", 80), 80, strings.Repeat("a", 80)},
		{"one over", strings.Repeat("a", 81), 80, strings.Repeat("a", 79) + "…"},
		{"characters, not bytes", strings.Repeat("é", 80), 80, strings.Repeat("é", 80)},
		{"multibyte cut", strings.Repeat("한", 100), 80, strings.Repeat("한", 79) + "…"},
		{"no space before the ellipsis", strings.Repeat("a", 78) + " bcd", 80, strings.Repeat("a", 78) + "…"},
		{"a letter keeps its mark", strings.Repeat("a", 78) + "e\u0301xyz", 80, strings.Repeat("a", 78) + "…"},
		{"a joined emoji stays whole", strings.Repeat("a", 77) + "👩\u200d💻xyz", 80, strings.Repeat("a", 77) + "…"},
		{"a skin tone stays with its hand", strings.Repeat("a", 78) + "👋🏽xyz", 80, strings.Repeat("a", 78) + "…"},
		{"nothing clean: a hard cut", "a" + strings.Repeat("\u0301", 90), 80, "a" + strings.Repeat("\u0301", 78) + "…"},
	} {
		got := fit(tc.in, tc.n)
		if got != tc.want {
			t.Errorf("%s: fit(%q, %d) = %q, want %q", tc.name, tc.in, tc.n, got, tc.want)
		}
		if n := utf8.RuneCountInString(got); n > tc.n {
			t.Errorf("%s: %d characters, over %d", tc.name, n, tc.n)
		}
	}
}

// Whatever an option holds — a role's 100-character name, a label saved
// before the limits were checked — the rendered message keeps Discord's
// limits: labels, descriptions, max_values within the options left; and
// a menu with no options renders nothing.
func TestRenderWithinLimits(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("ü", 120)
	opts := []option{{ID: 1, RoleID: "r1", Label: long, Description: long}, {ID: 2, RoleID: "r2", Label: "Blue"}}
	within := func(what, s string, n int) {
		if c := utf8.RuneCountInString(s); c > n {
			t.Errorf("%s has %d characters, over %d", what, c, n)
		}
	}
	for _, style := range styles {
		_, components, err := render(&menu{ID: 7, Name: "m", Style: style, MaxPicks: 5, Options: opts})
		if err != nil {
			t.Fatalf("%s: %v", style, err)
		}
		for _, c := range components[0].(discordgo.ActionsRow).Components {
			switch c := c.(type) {
			case discordgo.Button:
				within("a button's label", c.Label, 80)
			case discordgo.SelectMenu:
				if c.MaxValues != len(opts) || len(c.Options) != len(opts) {
					t.Errorf("select with %d options and max_values %d, want %d of each", len(c.Options), c.MaxValues, len(opts))
				}
				for _, o := range c.Options {
					within("a select option's label", o.Label, 100)
					within("a select option's description", o.Description, 100)
				}
			}
		}
		if _, _, err := render(&menu{ID: 7, Name: "m", Style: style}); !errors.Is(err, errNoOptions) {
			t.Errorf("%s menu with no options rendered: %v", style, err)
		}
	}
}
