package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/herald-bot/herald/internal/demo"
)

func testProgress() demo.Progress {
	return demo.Progress{Elapsed: 12 * time.Second, Herald: "restarting", Faults: []string{"429 storm (global limit 1)"},
		Lanes:  []demo.Lane{{Name: "menu clicks sent", Done: 100, Total: 400}},
		Queues: []demo.Queue{{Lane: "events", Available: 7, Running: 3, Waiting: 2, LongestWait: 1500 * time.Millisecond}}}
}

// Off a terminal the live view is one plain line per look, with no
// escape codes; on a terminal it redraws its block in place.
func TestLiveView(t *testing.T) {
	t.Parallel()
	var plain bytes.Buffer
	v := newLiveView(&plain, false)
	v.show(testProgress())
	v.show(testProgress())
	lines := strings.Split(strings.TrimSpace(plain.String()), "\n")
	if len(lines) != 2 || strings.Contains(plain.String(), "\x1b") || v.every != 5*time.Second {
		t.Fatalf("plain view: %q every %s", plain.String(), v.every)
	}
	for _, want := range []string{"t=12s", "herald restarting", "429 storm", "menu clicks sent 100/400", "events queued 7 running 3 waiting 2 (up to 1.5s)"} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("plain line %q lacks %q", lines[0], want)
		}
	}
	var tty bytes.Buffer
	v = newLiveView(&tty, true)
	v.show(testProgress())
	first := tty.Len()
	v.show(testProgress())
	redraw := tty.String()[first:]
	// status, one lane, the queue header and one queue: 4 lines up.
	if !strings.HasPrefix(redraw, "\x1b[4A") || !strings.Contains(redraw, "[███████·······················]") {
		t.Fatalf("terminal redraw: %q", redraw)
	}
}

func TestPrintSummary(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	printSummary(&b, demo.Summary{Interactions: 549, Acked: 536, AckP50MS: 11.3, AckP95MS: 65.9, AckP99MS: 127.8,
		APICalls: 8332, NaiveAPICalls: 9514, ByCategory: []demo.Category{{Name: "menu messages", Work: 20, Calls: 5, Naive: 20},
			{Name: "tickets", Work: 130, Calls: 581, Naive: 586, NaiveWrong: 52}},
		Naive:              &demo.Summary{Interactions: 550, Acked: 536, AckP50MS: 2.1, AckP95MS: 4.4, AckP99MS: 7.5},
		RateLimitedByScope: map[string]int{"global": 157, "shared": 112}, InvalidRequests: 159, Drained: true,
		Lost: 1, Problems: []string{"notifications: monitor-01 alert #0001 was accepted but never delivered"}})
	out := b.String()
	for _, want := range []string{"549 (536 answered, 13 never answered)", "p50 11.3 ms · p95 65.9 ms · p99 127.8 ms of the answered; 13 never answered",
		"p99 7.5 ms of the answered; 14 of 550 never answered", "0.25×", "581   586 (52)", "0.88×", "menu messages", "8332", "9514",
		"global 157, shared 112", "invalid requests             159", "lost                         1", "monitor-01 alert #0001"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
}
