// Package input reads what an admin types for a role menu: an option's
// emoji and a temporary role's duration, refusing what Discord would
// refuse or what does not mean what it says.
package input

import (
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

var customEmoji = regexp.MustCompile(`^<(a?):([A-Za-z0-9_]{2,32}):(\d{17,20})>$`)

// Emoji is an emoji as a message component takes it: a custom emoji has
// an ID, a Unicode one only its Name.
type Emoji struct {
	Name     string
	ID       string
	Animated bool
}

// ParseEmoji reads an option's emoji: empty, a custom emoji as Discord
// writes it (<:name:id>, <a:name:id>), or a Unicode emoji — a few code
// points with no letters or digits, so a typo like "star" is refused
// instead of breaking the menu's publish.
func ParseEmoji(s string) (*Emoji, bool) {
	if s == "" {
		return nil, true
	}
	if m := customEmoji.FindStringSubmatch(s); m != nil {
		return &Emoji{Name: m[2], ID: m[3], Animated: m[1] == "a"}, true
	}
	if utf8.RuneCountInString(s) > 10 || !utf8.ValidString(s) {
		return nil, false
	}
	for _, r := range s {
		if r < 0x80 && r != '#' && r != '*' && !unicode.IsDigit(r) || unicode.IsLetter(r) || unicode.IsSpace(r) {
			return nil, false
		}
	}
	return &Emoji{Name: s}, true
}

// maxTemporary bounds a temporary role's duration.
const maxTemporary = 365 * 24 * time.Hour

// ParseDuration reads 30m, 12h, 7d, 1d12h or 0.
func ParseDuration(s string) (time.Duration, bool) {
	s = strings.TrimSpace(strings.ToLower(s))
	if s == "0" {
		return 0, true
	}
	var total time.Duration
	if days, rest, ok := strings.Cut(s, "d"); ok {
		// Bounded before multiplying: a huge count would wrap around to
		// a small duration.
		n, err := strconv.Atoi(days)
		if err != nil || n < 0 || n > int(maxTemporary/(24*time.Hour)) {
			return 0, false
		}
		total = time.Duration(n) * 24 * time.Hour
		s = rest
	}
	if s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			return 0, false
		}
		total += d
	}
	return total, total > 0 && total <= maxTemporary && total%time.Minute == 0
}

// FormatDuration writes d as ParseDuration reads it: 7d, 12h, 1d12h30m.
func FormatDuration(d time.Duration) string {
	var b strings.Builder
	if days := d / (24 * time.Hour); days > 0 {
		b.WriteString(strconv.Itoa(int(days)) + "d")
		d -= days * 24 * time.Hour
	}
	if h := d / time.Hour; h > 0 {
		b.WriteString(strconv.Itoa(int(h)) + "h")
		d -= h * time.Hour
	}
	if m := d / time.Minute; m > 0 {
		b.WriteString(strconv.Itoa(int(m)) + "m")
	}
	return b.String()
}
