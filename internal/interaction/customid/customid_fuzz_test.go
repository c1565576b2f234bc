package customid

import (
	"errors"
	"strings"
	"testing"
)

// Whatever bytes arrive as a custom_id, parsing is deterministic, accepts
// only what fits Discord's limit and the feature:version:payload shape,
// and what it accepts round-trips exactly; a refusal says why.
func FuzzParseCustomID(f *testing.F) {
	for _, s := range []string{
		"rolemenu:1:pick:12:3", "rolemenu:1:select:12", "tickets:1:close:42", "a:1:", "web-hook_2:3:x",
		"x", "::", "a:01:b", "a:0:b", "A:1:b", "a:1:b c", "a:1:é", "a:-1:b", "a:1:" + strings.Repeat("x", 97),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := Parse(s)
		again, err2 := Parse(s)
		if c != again || (err == nil) != (err2 == nil) {
			t.Fatalf("%q parsed differently twice: %+v, %v then %+v, %v", s, c, err, again, err2)
		}
		if err != nil {
			if !errors.Is(err, ErrMalformed) || len(err.Error()) <= len(ErrMalformed.Error())+2 {
				t.Fatalf("%q refused with %q: want ErrMalformed and a reason", s, err)
			}
			if c != (ID{}) {
				t.Fatalf("%q refused but parsed to %+v", s, c)
			}
			return
		}
		if len(s) > MaxLength {
			t.Fatalf("%q accepted with %d characters, over Discord's %d", s, len(s), MaxLength)
		}
		if c.String() != s {
			t.Fatalf("%q parsed to %+v, which formats as %q", s, c, c.String())
		}
		if !validFeature(c.Feature) || c.Version < 1 {
			t.Fatalf("%q accepted with feature %q version %d", s, c.Feature, c.Version)
		}
		if built, err := New(c.Feature, c.Version, c.Payload); err != nil || built != s {
			t.Fatalf("New of %+v = %q, %v; want %q", c, built, err, s)
		}
	})
}

// New builds only ids Parse reads back to the same parts,
// and refuses exactly those it would not.
func FuzzNewCustomID(f *testing.F) {
	f.Add("rolemenu", 1, "pick:12:3")
	f.Add("tickets", 2, "")
	f.Add("tickets", 0, "close:1")
	f.Add("Tickets", 1, "x")
	f.Add("a", 1, strings.Repeat("y", 96))
	f.Add("a", 1, strings.Repeat("y", 97))
	f.Add("a:1", 1, "x")
	f.Add("a", -1, "x")
	f.Fuzz(func(t *testing.T, feature string, version int, payload string) {
		s, err := New(feature, version, payload)
		formatted := ID{Feature: feature, Version: version, Payload: payload}.String()
		if err != nil {
			if !errors.Is(err, ErrMalformed) || s != "" {
				t.Fatalf("New(%q, %d, %q) = %q, %v; want \"\" and ErrMalformed", feature, version, payload, s, err)
			}
			if c, perr := Parse(formatted); perr == nil && c == (ID{feature, version, payload}) {
				t.Fatalf("New refused %q, which parses back to its parts", formatted)
			}
			return
		}
		if len(s) > MaxLength {
			t.Fatalf("New built %q, over Discord's %d characters", s, MaxLength)
		}
		c, err := Parse(s)
		if err != nil || c != (ID{feature, version, payload}) {
			t.Fatalf("New built %q, which parses as %+v, %v", s, c, err)
		}
	})
}
