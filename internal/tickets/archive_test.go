package tickets_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/heraldtest"
)

// busy makes the simulator archive threads after three seconds without
// activity, as Discord does early in a server near its active-thread
// limit (and after a week anyway), so a test meets archived tickets.
func busy(h *heraldtest.Herald) { h.Sim.Server.SetThreadArchiveAfter(3 * time.Second) }

// archived waits until Discord archived the ticket's thread.
func archived(h *heraldtest.Herald, ch string) {
	h.Eventually("the thread archived", func() bool { return thread(h, ch).Archived })
}

// archive has Discord archive the ticket's thread now, as a quiet
// thread's period running out does.
func archive(t *testing.T, h *heraldtest.Herald, ch string) {
	t.Helper()
	if err := h.Sim.Server.ArchiveThread(ch); err != nil {
		t.Fatal(err)
	}
}

// refused counts requests to route Discord answered with 400 (50083, the
// thread archived).
func refused(h *heraldtest.Herald, method, route string) int {
	n := 0
	for _, r := range h.Sim.Server.Requests() {
		if r.Method == method && r.Route == route && r.Status == http.StatusBadRequest {
			n++
		}
	}
	return n
}

// A quiet ticket's thread is archived by Discord; staff still join it
// from the notification, add and remove members and rename it: herald
// unarchives the thread when Discord refuses the change.
func TestArchivedTicketStaysWorkable(t *testing.T) {
	t.Parallel()
	h := heraldtest.New(t, heraldtest.WithFixture(fixture()))
	setup(t, h, heraldtest.Opts{"log-channel": h.Channel("ticket-log")})
	ch := openTicket(t, h, "**Help desk**", "bob")
	notice := message(t, h, h.Channel("ticket-log"), "opened ticket #1")

	archive(t, h, ch)
	if r := h.As("sam").Click(notice, heraldtest.Button(t, notice, "Join ticket")).Reply(); !strings.Contains(r.Content, "You are in ticket #1") {
		t.Fatalf("join an archived ticket: %q", r.Content)
	}
	if !slices.Contains(thread(h, ch).Members, h.Member("sam")) {
		t.Fatalf("sam not in the thread: %v", thread(h, ch).Members)
	}

	archive(t, h, ch)
	command(h, "sam", ch, "add", map[string]any{"member": userID(h.Member("carol"))}).text(t)
	h.Eventually("carol in the thread", func() bool { return slices.Contains(thread(h, ch).Members, h.Member("carol")) })
	message(t, h, ch, "added <@"+h.Member("carol"))

	archive(t, h, ch)
	command(h, "sam", ch, "remove", map[string]any{"member": userID(h.Member("carol"))}).text(t)
	h.Eventually("carol out of the thread", func() bool { return !slices.Contains(thread(h, ch).Members, h.Member("carol")) })

	archive(t, h, ch)
	command(h, "sam", ch, "rename", map[string]any{"name": "Billing question"}).text(t)
	h.Eventually("the thread renamed", func() bool { return thread(h, ch).Name == "Billing question" })

	// Each member change met the archive once and unarchived the thread;
	// the rename unarchived in its own request.
	const members = "/channels/{channel_id}/thread-members/{user_id}"
	if put, del := refused(h, http.MethodPut, members), refused(h, http.MethodDelete, members); put < 2 || del < 1 {
		t.Errorf("%d member adds and %d removals refused as archived, want the join's, the add's and the removal's", put, del)
	}
	if n := refused(h, http.MethodPatch, "/channels/{channel_id}"); n != 0 {
		t.Errorf("%d thread changes refused", n)
	}
}

// Inactivity auto-close keeps working on a thread Discord archived: the
// warning unarchives it, and the close archives and locks it even when
// Discord archived it again before the last step (here: that step's
// request takes longer than the archive period to reach Discord).
func TestAutoCloseArchivedTicket(t *testing.T) {
	t.Parallel()
	h := heraldtest.New(t, heraldtest.WithFixture(fixture()), heraldtest.WithEnv(map[string]string{"HERALD_TICKETS_GRACE": "1s"}))
	busy(h)
	setup(t, h, heraldtest.Opts{"log-channel": h.Channel("ticket-log")})
	h.As("admin").Command("general", "/tickets/settings", heraldtest.Opts{"inactivity": 1}).Reply()
	ch := openTicket(t, h, "**Help desk**", "bob")
	message(t, h, ch, "opened ticket #1")
	archived(h, ch)

	// An hour passes.
	if _, err := h.DB.Exec(t.Context(), `UPDATE ticket_settings SET inactivity_secs = 1`); err != nil {
		t.Fatal(err)
	}
	if _, err := h.DB.Exec(t.Context(), `UPDATE river_job SET scheduled_at = now() WHERE kind = 'tickets_autoclose'`); err != nil {
		t.Fatal(err)
	}
	message(t, h, ch, "has had no messages for a while")
	h.Sim.SetFault(sim.Fault{Route: "PATCH /channels/{channel_id}", LatencyMS: 4000})
	message(t, h, ch, "no messages for too long")
	h.Eventually("the lock refused as archived", func() bool { return refused(h, http.MethodPatch, "/channels/{channel_id}") > 0 })
	h.Sim.SetFault(sim.Fault{Route: "PATCH /channels/{channel_id}", Clear: true})
	h.Eventually("the ticket closed", func() bool {
		var status string
		h.DB.QueryRow(t.Context(), `SELECT status FROM tickets`).Scan(&status)
		return status == "closed"
	})
	if th := thread(h, ch); !th.Archived || !th.Locked {
		t.Errorf("closed ticket's thread %+v, want archived and locked", th)
	}
}
