// Package channelname is what herald names a ticket's channel or thread,
// within Discord's rules for a text channel's name.
package channelname

import (
	"fmt"
	"strings"
	"unicode"
)

// Ticket names the channel or thread of ticket number: it follows the
// guild's naming scheme ("username", else "ticket-<number>") within
// Discord's channel name rules (lower case, no spaces, at most 100
// characters).
func Ticket(scheme, username string, number int) string {
	n := fmt.Sprintf("%04d", number)
	if scheme != "username" {
		return "ticket-" + n
	}
	if u := Clean(username); u != "" {
		// Cut without truncate's '…', which a channel name may not hold.
		if r := []rune(u); len(r) > 90 {
			u = string(r[:90])
		}
		return u + "-" + n
	}
	return "ticket-" + n
}

// Clean reduces s to what Discord keeps in a text channel's name:
// lower-case letters, digits, '-' and '_', spaces as '-'.
func Clean(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(s)) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-':
			b.WriteRune(r)
		case unicode.IsSpace(r):
			b.WriteRune('-')
		}
	}
	return strings.Trim(b.String(), "-")
}
