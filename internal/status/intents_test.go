package status_test

import (
	"strings"
	"testing"

	"github.com/herald-bot/herald/internal/heraldtest"
)

// On an application whose owner switched on no privileged intent, herald
// comes up (it identifies without them instead of meeting close 4014),
// answers interactions, and names each missing intent with what it turns
// off in its log and in /herald status.
func TestNoPrivilegedIntents(t *testing.T) {
	t.Parallel()
	h := heraldtest.New(t, heraldtest.WithApplicationFlags(0))
	report := statusAs(t, h, "owner")
	for _, want := range []string{"Privileged intents", "Server Members Intent", "closing a ticket when its opener leaves the server",
		"listing members for `/roles bulk`", "Message Content Intent", "members' messages in transcripts", "Privileged Gateway Intents"} {
		if !strings.Contains(report, want) {
			t.Errorf("/herald status does not say %q:\n%s", want, report)
		}
	}
	if strings.Contains(report, "Nothing is waiting or failed.") {
		t.Errorf("all clear although intents are missing:\n%s", report)
	}
	logs := h.Logs()
	for _, want := range []string{`intent="Server Members Intent"`, `intent="Message Content Intent"`} {
		if !strings.Contains(logs, want) {
			t.Errorf("the log does not name %s", want)
		}
	}
}

// With the intents the README asks for, status says nothing about them.
func TestPrivilegedIntentsOn(t *testing.T) {
	t.Parallel()
	h := heraldtest.New(t)
	if report := statusAs(t, h, "owner"); strings.Contains(report, "Privileged intents") {
		t.Errorf("status names intents although all are on:\n%s", report)
	}
}
