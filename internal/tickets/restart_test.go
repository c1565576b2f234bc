package tickets_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/heraldtest"
)

// Discord creates a ticket's thread but its answer is lost: the open
// job's retry finds the thread among the guild's active threads by its
// name instead of creating a second, and the ticket opens in it once.
func TestThreadCreateAnswerLost(t *testing.T) {
	t.Parallel()
	h := heraldtest.New(t, heraldtest.WithFixture(fixture()))
	panel := setup(t, h, heraldtest.Opts{})
	h.Sim.SetFault(sim.Fault{Route: "POST /channels/{channel_id}/threads", DropAfterApply: 1})
	ch := ticketChannel(t, h.As("bob").Click(panel, heraldtest.Button(t, panel, "Open ticket")).Reply())
	g := h.Sim.Guild(h.Guild.ID)
	if len(g.Threads) != 1 || g.Threads[0].ID != ch {
		t.Fatalf("threads = %+v, want the one the lost create made", g.Threads)
	}
	if n := h.Succeeded(http.MethodGet, "/guilds/{guild_id}/threads/active"); n != 1 {
		t.Errorf("%d reads of the active threads, want 1 (by the retry)", n)
	}
	message(t, h, ch, "opened ticket #1")
	if n := count(h, ch, "opened ticket #1"); n != 1 {
		t.Errorf("%d welcome messages, want 1", n)
	}
}

// Auto-close for inactivity across redeploys: herald is stopped while
// the inactivity job is scheduled and started after it fell due, then
// stopped again within the grace period after its warning. The warning
// and then the close each happen once. The durations are shortened
// through the guild's setting and the grace variable; no due time is
// moved by hand.
func TestAutoCloseAcrossRestart(t *testing.T) {
	t.Parallel()
	// The grace is long enough for herald to be stopped within it after
	// the warning is seen, on a loaded machine too.
	const quiet, grace = 3 * time.Second, 10 * time.Second
	h := heraldtest.New(t, heraldtest.WithFixture(fixture()), heraldtest.WithEnv(map[string]string{"HERALD_TICKETS_GRACE": grace.String()}))
	setup(t, h, heraldtest.Opts{"log-channel": h.Channel("ticket-log")})
	// /tickets settings counts hours; the test's guild counts seconds.
	if _, err := h.DB.Exec(t.Context(), `UPDATE ticket_settings SET inactivity_secs = $1`, int(quiet.Seconds())); err != nil {
		t.Fatal(err)
	}
	ch := openTicket(t, h, "**Help desk**", "bob")
	message(t, h, ch, "opened ticket #1")
	h.Stop()
	// herald stays down until the inactivity job falls due.
	awaitAutoCloseDue(t, h, "the inactivity job due")
	if n := count(h, ch, "no messages for a while"); n != 0 {
		t.Fatalf("%d warnings while herald was stopped", n)
	}
	h.Start()
	message(t, h, ch, "no messages for a while")
	h.Stop()
	if thread(h, ch).Archived {
		t.Fatal("closed before the grace period ended")
	}
	awaitAutoCloseDue(t, h, "the grace period over")
	h.Start()
	h.Eventually("the thread archived", func() bool { return thread(h, ch).Archived })
	message(t, h, ch, "no messages for too long")
	message(t, h, h.Channel("ticket-log"), "Transcript of ticket #1")
	for _, what := range []string{"no messages for a while", "no messages for too long"} {
		if n := count(h, ch, what); n != 1 {
			t.Errorf("%d messages %q, want 1", n, what)
		}
	}
	if n := count(h, h.Channel("ticket-log"), "Transcript of ticket #1"); n != 1 {
		t.Errorf("%d transcript uploads, want 1", n)
	}
	if n := h.Succeeded(http.MethodPatch, "/channels/{channel_id}"); n != 1 {
		t.Errorf("%d channel edits, want 1 archive", n)
	}
	// The close job marks the ticket closed after its last Discord call.
	h.Eventually("the ticket closed", func() bool {
		var status string
		return h.DB.QueryRow(t.Context(), `SELECT status FROM tickets`).Scan(&status) == nil && strings.EqualFold(status, "closed")
	})
}

// awaitAutoCloseDue waits, herald stopped, until the ticket's auto-close
// job is due on the clock its worker reads: the wall clock, which the
// test cannot step, so the scenario waits for the moment itself.
func awaitAutoCloseDue(t *testing.T, h *heraldtest.Herald, what string) {
	t.Helper()
	h.Eventually(what, func() bool {
		var at time.Time
		err := h.DB.QueryRow(t.Context(), `SELECT max(scheduled_at) FROM river_job
			WHERE kind = 'tickets_autoclose' AND state IN ('scheduled', 'available', 'retryable')`).Scan(&at)
		return err == nil && !time.Now().Before(at)
	})
}

// An open held back by the thread-create limit snoozes without sending
// its create; its next attempt creates the thread without first reading
// the guild's active threads, which only a create that may have landed
// needs.
func TestHeldBackOpenReadsNoThreads(t *testing.T) {
	t.Parallel()
	h := heraldtest.New(t, heraldtest.WithFixture(fixture()))
	panel := setup(t, h, heraldtest.Opts{})
	h.Sim.SetLimits(sim.LimitChange{Route: "POST /channels/{channel_id}/threads", Limit: 1, WindowMS: 3000})
	for _, who := range []string{"bob", "sam"} {
		h.As(who).Click(panel, heraldtest.Button(t, panel, "Open ticket"))
	}
	h.Eventually("both tickets open", func() bool {
		n := 0
		h.DB.QueryRow(t.Context(), `SELECT count(*) FROM tickets WHERE status = 'open'`).Scan(&n)
		return n == 2
	})
	var snoozes int
	h.DB.QueryRow(t.Context(), `SELECT coalesce(sum((metadata->>'snoozes')::int), 0) FROM river_job WHERE kind = 'tickets_open'`).Scan(&snoozes)
	if snoozes == 0 {
		t.Fatal("no open was held back by the limit; the test shows nothing")
	}
	if n := h.Succeeded(http.MethodGet, "/guilds/{guild_id}/threads/active"); n != 0 {
		t.Errorf("%d reads of the active threads, want none: no create was lost", n)
	}
	if n := len(h.Sim.Guild(h.Guild.ID).Threads); n != 2 {
		t.Errorf("%d threads, want 2", n)
	}
}
