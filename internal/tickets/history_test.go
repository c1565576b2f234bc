package tickets_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/heraldtest"
)

// A transcript's read stores each page as it comes. Past five pages the
// history bucket (5 per 12 s here) makes a read wait longer than a job
// with an 8 s timeout may hold its worker, so the job snoozes until the
// bucket's reset, and its next attempt goes on after the last page
// stored: no page is read twice, no message is lost or doubled, and the
// stored pages go once the transcript is kept. (Discord's 5 per 5 s and
// a 4 s timeout left a loaded machine too little time for five pages:
// an attempt cut off mid-read rightly reads that page again.)
func TestTranscriptGoesOnFromItsLastPage(t *testing.T) {
	t.Parallel()
	h := heraldtest.New(t, heraldtest.WithFixture(fixture()),
		heraldtest.WithEnv(map[string]string{"HERALD_JOB_TIMEOUT": "interactive=1m,events=8s,sync=2m,background=2m"}))
	h.Sim.SetLimits(sim.LimitChange{Route: "GET /channels/{channel_id}/messages", Limit: 5, WindowMS: 12000})
	setup(t, h, heraldtest.Opts{"mode": "channel", "log-channel": h.Channel("ticket-log")})
	ch := openTicket(t, h, "**Help desk**", "bob")
	message(t, h, ch, "opened ticket #1")
	for i := range 648 {
		post(t, h, "bob", ch, "line "+strconv.Itoa(i))
	}
	if r := command(h, "sam", ch, "close", nil).text(t); !strings.Contains(r, "Closing ticket #1") {
		t.Fatalf("close: %q", r)
	}
	h.Eventually("the ticket closed", func() bool {
		var status string
		h.DB.QueryRow(t.Context(), `SELECT status FROM tickets`).Scan(&status)
		return status == "closed"
	})

	reads := 0
	for _, r := range h.Sim.Server.Requests() {
		if r.Method == http.MethodGet && r.Path == "/channels/"+ch+"/messages" {
			reads++
		}
	}
	// The welcome, 648 lines and the closing message: 650, six full
	// pages and a short seventh.
	if reads != 7 {
		t.Errorf("%d history reads, want 7 (each page once)", reads)
	}
	var snoozes int
	h.DB.QueryRow(t.Context(), `SELECT coalesce((metadata->>'snoozes')::int, 0) FROM river_job WHERE kind = 'tickets_close'`).Scan(&snoozes)
	if snoozes < 1 {
		t.Error("the close was never snoozed, want a snooze at the sixth page")
	}
	var plain string
	var msgs, left int
	h.DB.QueryRow(t.Context(), `SELECT plain, messages FROM ticket_transcripts`).Scan(&plain, &msgs)
	h.DB.QueryRow(t.Context(), `SELECT count(*) FROM ticket_history_pages`).Scan(&left)
	if msgs != 650 || left != 0 {
		t.Errorf("transcript of %d messages with %d pages left stored, want 650 and 0", msgs, left)
	}
	for _, line := range []string{"line 0\n", "line 647\n"} {
		if n := strings.Count(plain, line); n != 1 {
			t.Errorf("%q is %d times in the transcript, want once", line, n)
		}
	}
}
