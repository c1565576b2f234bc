package input

import (
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"
)

// A temporary role's duration, as an admin types it: what is accepted is
// within bounds, means what it says, and formats back to itself.
func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"30m", "12h", "7d", "1d12h", "0", " 2D ", "365d", "366d", "1d-1h", "30s", "1h30m30s",
		"d", "", "-1h", "1.5h", "6254999482460d", "106751d23h47m"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, ok := ParseDuration(s)
		if again, ok2 := ParseDuration(s); again != d || ok2 != ok {
			t.Fatalf("%q parsed differently twice", s)
		}
		if !ok {
			return
		}
		if d == 0 {
			if strings.TrimSpace(s) != "0" {
				t.Fatalf("%q accepted as no duration", s)
			}
			return
		}
		if d < time.Minute || d > maxTemporary || d%time.Minute != 0 {
			t.Fatalf("%q accepted as %v: want whole minutes up to %v", s, d, maxTemporary)
		}
		if want, exact := meant(s); !exact || want != d {
			t.Fatalf("%q accepted as %v, but it says %v (exact %v)", s, d, want, exact)
		}
		formatted := FormatDuration(d)
		if back, ok := ParseDuration(formatted); !ok || back != d {
			t.Fatalf("%v formats as %q, which parses as %v, %v", d, formatted, back, ok)
		}
	})
}

// meant is the duration s spells, summed in float64 so that nothing
// wraps around; exact is false when s has no such reading.
func meant(s string) (time.Duration, bool) {
	s = strings.TrimSpace(strings.ToLower(s))
	var total float64
	if days, rest, ok := strings.Cut(s, "d"); ok {
		n, err := strconv.ParseFloat(days, 64)
		if err != nil {
			return 0, false
		}
		total, s = n*float64(24*time.Hour), rest
	}
	if s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			return 0, false
		}
		total += float64(d)
	}
	if total > float64(maxTemporary) {
		return 0, false
	}
	return time.Duration(total), true
}

// An option's emoji: accepted input yields what Discord takes — a custom
// emoji whose parts rebuild the input, or a short Unicode text — and the
// refused ones are words, spaces or garbage.
func FuzzParseEmoji(f *testing.F) {
	for _, s := range []string{"", "🔴", "👍🏽", "🇫🇷", "#️⃣", "<:blob:123456789012345678>", "<a:dance:123456789012345678>",
		"star", ":star:", "<:x:1>", "🔴 red", "\xff", "<:blob:12345678901234567890123>", "1", "✓"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, ok := ParseEmoji(s)
		if again, ok2 := ParseEmoji(s); ok2 != ok || (again == nil) != (e == nil) || e != nil && *again != *e {
			t.Fatalf("%q parsed differently twice", s)
		}
		switch {
		case !ok:
			if e != nil {
				t.Fatalf("%q refused but parsed to %+v", s, e)
			}
		case s == "":
			if e != nil {
				t.Fatalf("no emoji parsed to %+v", e)
			}
		case e == nil:
			t.Fatalf("%q accepted as no emoji", s)
		case e.ID != "":
			if n := len(e.ID); n < 17 || n > 20 || strings.Trim(e.ID, "0123456789") != "" {
				t.Fatalf("%q accepted with id %q: want a snowflake", s, e.ID)
			}
			a := ""
			if e.Animated {
				a = "a"
			}
			if rebuilt := "<" + a + ":" + e.Name + ":" + e.ID + ">"; rebuilt != s {
				t.Fatalf("%q parsed to %+v, which Discord writes as %q", s, e, rebuilt)
			}
		default:
			if e.Name != s || !utf8.ValidString(s) || utf8.RuneCountInString(s) > 10 {
				t.Fatalf("%q accepted as the Unicode emoji %q", s, e.Name)
			}
			for _, r := range s {
				if unicode.IsLetter(r) || unicode.IsSpace(r) {
					t.Fatalf("%q accepted as an emoji, holding %q", s, r)
				}
			}
		}
	})
}
