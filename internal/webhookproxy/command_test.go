package webhookproxy

import (
	"strings"
	"testing"
	"time"

	"github.com/herald-bot/herald/internal/discord/transport"
	"github.com/herald-bot/herald/internal/i18n"
)

// Every reason a target can wait for reads as a sentence in every
// shipped language, never as its key.
func TestWaitReasonsLocalized(t *testing.T) {
	c, err := i18n.Shipped()
	if err != nil {
		t.Fatal(err)
	}
	until := time.Now().Add(time.Minute)
	for _, lang := range []string{"en", "de", "fr", "ko"} {
		loc := c.For(lang, "")
		for _, reason := range []transport.Class{transport.RateLimited, transport.Transient, transport.UnknownOutcome, transport.Unauthorized} {
			got := line(loc, targetStatus{WebhookID: "1", Depth: 3, WaitingUntil: &until, WaitReason: string(reason)})
			if strings.Contains(got, "webhookproxy.") || !strings.Contains(got, "<t:") {
				t.Errorf("%s, %s: %q", lang, reason, got)
			}
		}
	}
}
