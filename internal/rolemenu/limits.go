package rolemenu

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Discord's limits on what a menu carries, counted in characters
// (docs: Components Reference, Button and String Select structures). A
// role's name may have 100 characters, so a button showing it is cut.
const (
	maxButtonLabel = 80   // a button's label; an admin's own label, whatever the style
	maxSelectLabel = 100  // a select option's label
	maxDescription = 100  // a select option's description
	maxMenuText    = 1000 // a menu's description: with its name, within a message's 2000
)

// ellipsis ends a cut text.
const ellipsis = "…"

// fit cuts s to at most n characters, "…" included, at a clean place: a
// letter keeps its combining marks and a joined emoji its parts, or they
// go together, and no space is left before the "…".
func fit(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	cut := n - 1
	for cut > 0 && (continues(r[cut]) || r[cut-1] == zwj) {
		cut--
	}
	kept := strings.TrimRightFunc(string(r[:cut]), unicode.IsSpace)
	if kept == "" { // nothing but marks and joiners: a hard cut
		kept = string(r[:n-1])
	}
	return kept + ellipsis
}

// zwj joins emoji into one (👩‍💻).
const zwj = '\u200d'

// continues reports whether c belongs to the character before it: a
// combining mark, a variation selector, a joiner, a skin tone.
func continues(c rune) bool {
	return unicode.Is(unicode.M, c) || c == zwj || unicode.Is(unicode.Variation_Selector, c) || c >= 0x1f3fb && c <= 0x1f3ff
}
