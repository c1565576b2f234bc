package status

import (
	"strings"
	"testing"
	"time"

	"github.com/herald-bot/herald/internal/discord/transport"
	"github.com/herald-bot/herald/internal/i18n"
	"github.com/herald-bot/herald/internal/work"
)

// When Discord's edge (Cloudflare) blocks herald, the status names the
// cause the transport reports (a 403 with code 40333, an HTML page, a
// header-less 429 and how long herald waits) rather than a missing
// permission or too many invalid requests, in every language; jobs held
// by it wait for a reason of their own.
func TestStatusNamesTheEdgeBlock(t *testing.T) {
	c, err := i18n.Shipped()
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	reason := "403 Forbidden on GET /channels/{channel_id} (code 40333: internal network error; check the User-Agent)"
	h := transport.Health{Time: now, EdgeBlockedUntil: now.Add(10 * time.Minute), EdgeBlockedReason: reason, InvalidLimit: 9000}
	for _, locale := range []string{"en-US", "de", "fr", "ko"} {
		loc := c.For(locale, "")
		lines := healthLines(loc, h, now)
		if len(lines) != 2 || !strings.Contains(lines[0], reason) {
			t.Errorf("%s: %q, want the edge's reason", locale, lines)
		}
		key := "status.wait_reason." + string(work.ReasonBlocked)
		if got := loc.T(key, nil); got == key {
			t.Errorf("%s: no text for %s", locale, key)
		}
	}
	if line := healthLines(c.For("en-US", ""), h, now)[0]; !strings.HasPrefix(line, "Discord's edge (Cloudflare) blocked herald: "+reason) {
		t.Errorf("en-US: %q", line)
	}
}

// While Discord fails many requests, the status says so and what herald
// does about it, in every language.
func TestStatusNamesADegradedDiscord(t *testing.T) {
	c, err := i18n.Shipped()
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	h := transport.Health{Time: now, Failing: 6, Degraded: true, InvalidLimit: 9000}
	for _, locale := range []string{"en-US", "de", "fr", "ko"} {
		lines := healthLines(c.For(locale, ""), h, now)
		if len(lines) != 2 || !strings.Contains(lines[0], "6") || strings.Contains(lines[0], "status.degraded") {
			t.Errorf("%s: %q, want the failing count", locale, lines)
		}
	}
	h.Degraded = false
	if lines := healthLines(c.For("en-US", ""), h, now); len(lines) != 1 {
		t.Errorf("healthy: %q", lines)
	}
}
