package channelname

import (
	"fmt"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// A ticket channel's name, from a member's username or a staff member's
// /ticket rename: always a name Discord keeps as it is — lower case,
// letters, digits, '-' and '_', 1 to 100 characters — ending in the
// ticket's number, and reducing a name twice changes nothing more.
func FuzzTicketName(f *testing.F) {
	for _, s := range []string{"erin", "Erin Smith", "  --x--  ", "ÉLODIE", "İstanbul", "名前", "🎉", "a\tb\nc", "\xff\xfe",
		"ǅemal", strings.Repeat("long", 40), strings.Repeat("é", 95)} {
		f.Add("username", s, 7)
	}
	f.Add("number", "erin", 12345)
	f.Fuzz(func(t *testing.T, scheme, username string, number int) {
		if number < 1 {
			return // ticket numbers count from 1
		}
		name := Ticket(scheme, username, number)
		suffix := fmt.Sprintf("-%04d", number)
		if !strings.HasSuffix(name, suffix) {
			t.Fatalf("Ticket(%q, %q, %d) = %q: no number", scheme, username, number, name)
		}
		if number < 1e9 && utf8.RuneCountInString(name) > 100 {
			t.Fatalf("Ticket(%q, %q, %d) = %q: over Discord's 100 characters", scheme, username, number, name)
		}
		if again := Clean(name); again != name {
			t.Fatalf("Ticket(%q, %q, %d) = %q, which Discord would rename %q", scheme, username, number, name, again)
		}
		reduced := Clean(username)
		if reduced != Clean(reduced) {
			t.Fatalf("Clean(%q) = %q, reduced again %q", username, reduced, Clean(reduced))
		}
		if reduced != strings.ToLower(reduced) || strings.HasPrefix(reduced, "-") || strings.HasSuffix(reduced, "-") {
			t.Fatalf("Clean(%q) = %q", username, reduced)
		}
		for _, r := range reduced {
			if !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_') {
				t.Fatalf("Clean(%q) = %q, holding %q", username, reduced, r)
			}
		}
	})
}
