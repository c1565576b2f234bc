package input

import (
	"testing"
	"time"
)

func TestParseEmojiAndDuration(t *testing.T) {
	t.Parallel()
	for s, ok := range map[string]bool{"": true, "🔴": true, "<:blob:123456789012345678>": true, "<a:dance:123456789012345678>": true,
		"star": false, ":star:": false, "<:x:1>": false, "🔴 red": false} {
		if _, got := ParseEmoji(s); got != ok {
			t.Errorf("ParseEmoji(%q) ok = %v, want %v", s, got, ok)
		}
	}
	for s, want := range map[string]time.Duration{"30m": 30 * time.Minute, "12h": 12 * time.Hour, "7d": 7 * 24 * time.Hour,
		"1d12h": 36 * time.Hour, "0": 0} {
		if got, ok := ParseDuration(s); !ok || got != want {
			t.Errorf("ParseDuration(%q) = %v, %v", s, got, ok)
		}
		if want > 0 && FormatDuration(want) != s {
			t.Errorf("FormatDuration(%v) = %q, want %q", want, FormatDuration(want), s)
		}
	}
	for _, s := range []string{"", "soon", "-1h", "30s", "400d", "d"} {
		if _, ok := ParseDuration(s); ok {
			t.Errorf("ParseDuration(%q) accepted", s)
		}
	}
}
