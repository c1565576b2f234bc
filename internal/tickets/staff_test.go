package tickets_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/heraldtest"
)

// openTicket opens a ticket as username and returns its thread or channel.
func openTicket(t *testing.T, h *heraldtest.Herald, panelMsg string, username string) string {
	t.Helper()
	panel := message(t, h, h.Channel("help"), panelMsg)
	return ticketChannel(t, h.As(username).Click(panel, heraldtest.Button(t, panel, "Open ticket")).Reply())
}

func thread(h *heraldtest.Herald, id string) sim.SnapshotThread {
	for _, th := range h.Sim.Guild(h.Guild.ID).Threads {
		if th.ID == id {
			return th
		}
	}
	return sim.SnapshotThread{}
}

// Every staff command inside a ticket: claim (button), add, remove,
// transfer, rename, info, close request confirmed by the opener, reopen
// and transcript — each refusal clear and changing nothing, each change
// announced in the ticket once.
func TestStaffCommands(t *testing.T) {
	t.Parallel()
	h := heraldtest.New(t, heraldtest.WithFixture(fixture()))
	setup(t, h, heraldtest.Opts{"log-channel": h.Channel("ticket-log")})
	ch := openTicket(t, h, "**Help desk**", "bob")
	welcome := message(t, h, ch, "opened ticket #1")

	if r := command(h, "bob", ch, "claim", nil).text(t); !strings.Contains(r, "Only members with") {
		t.Errorf("claim by the opener: %q", r)
	}
	if r := h.As("sam").Click(welcome, heraldtest.Button(t, welcome, "Claim")).Reply(); !strings.Contains(r.Content, "You claimed ticket #1") {
		t.Errorf("claim button: %q", r.Content)
	}
	message(t, h, ch, "claimed this ticket")
	if r := command(h, "tess", ch, "claim", nil).text(t); !strings.Contains(r, "<@"+h.Member("sam")+"> has claimed") {
		t.Errorf("second claim: %q", r)
	}
	if r := command(h, "sam", ch, "add", map[string]any{"member": userID(h.Member("carol"))}).text(t); !strings.Contains(r, "Adding") {
		t.Errorf("add: %q", r)
	}
	h.Eventually("carol in the thread", func() bool { return slices.Contains(thread(h, ch).Members, h.Member("carol")) })
	if r := command(h, "sam", ch, "add", map[string]any{"member": userID(h.Member("bob"))}).text(t); !strings.Contains(r, "already in this ticket") {
		t.Errorf("adding the opener: %q", r)
	}
	if r := command(h, "sam", ch, "remove", map[string]any{"member": userID(h.Member("carol"))}).text(t); !strings.Contains(r, "Removing") {
		t.Errorf("remove: %q", r)
	}
	h.Eventually("carol out of the thread", func() bool { return !slices.Contains(thread(h, ch).Members, h.Member("carol")) })
	if r := command(h, "sam", ch, "transfer", map[string]any{"member": userID(h.Member("carol"))}).text(t); !strings.Contains(r, "does not have") {
		t.Errorf("transfer to a non-staff member: %q", r)
	}
	if r := command(h, "sam", ch, "transfer", map[string]any{"member": userID(h.Member("tess"))}).text(t); !strings.Contains(r, "Handing") {
		t.Errorf("transfer: %q", r)
	}
	if r := command(h, "sam", ch, "rename", map[string]any{"name": "Billing question"}).text(t); !strings.Contains(r, "Renaming") {
		t.Errorf("rename: %q", r)
	}
	h.Eventually("the thread renamed", func() bool { return thread(h, ch).Name == "Billing question" })
	if r := command(h, "bob", ch, "info", nil).text(t); !strings.Contains(r, "Claimed by: <@"+h.Member("tess")+">") {
		t.Errorf("info: %q", r)
	}
	if r := command(h, "bob", h.Channel("general"), "info", nil).text(t); !strings.Contains(r, "not a ticket") {
		t.Errorf("info outside a ticket: %q", r)
	}
	for _, what := range []string{"added <@" + h.Member("carol"), "removed <@" + h.Member("carol"), "handed this ticket", "renamed this ticket"} {
		message(t, h, ch, what)
		if n := count(h, ch, what); n != 1 {
			t.Errorf("%d messages %q, want 1", n, what)
		}
	}

	// A close request, confirmed by the opener, closes the ticket: the
	// closing message (the confirmation's answer, for everyone in the
	// ticket: the close job posts no other), the transcript in the log
	// channel, a DM, and the thread archived and locked.
	if r := command(h, "tess", ch, "close-request", map[string]any{"reason": "solved"}).text(t); !strings.Contains(r, "Asked the opener") {
		t.Errorf("close-request: %q", r)
	}
	request := message(t, h, ch, "thinks this ticket can be closed")
	closedBy := "Closing ticket #1, closed by <@" + h.Member("bob") + ">: closed on request"
	if r := h.As("bob").Click(request, heraldtest.Button(t, request, "Close now")).Reply(); !strings.Contains(r.Content, closedBy) ||
		!strings.Contains(r.Content, "Reason: solved") || r.Flags&discordgo.MessageFlagsEphemeral != 0 {
		t.Errorf("confirm: %q (flags %d), want the public closing message", r.Content, r.Flags)
	}
	h.Eventually("the thread archived and locked", func() bool { th := thread(h, ch); return th.Archived && th.Locked })
	upload := message(t, h, h.Channel("ticket-log"), "Transcript of ticket #1")
	var files []string
	for _, a := range upload.Attachments {
		files = append(files, a.Filename)
	}
	if slices.Sort(files); !slices.Equal(files, []string{"ticket-0001.html", "ticket-0001.txt"}) {
		t.Errorf("uploaded %v", files)
	}
	if n, posted := count(h, ch, closedBy), count(h, ch, "This ticket was closed by"); n != 1 || posted != 0 {
		t.Errorf("%d closing answers and %d closing messages, want the answer alone", n, posted)
	}
	var reason string
	h.DB.QueryRow(t.Context(), `SELECT close_reason FROM tickets`).Scan(&reason)
	if reason != "solved" {
		t.Errorf("close reason %q, want the request's", reason)
	}

	// Reopen, then the transcript by number from anywhere.
	if r := command(h, "sam", ch, "reopen", nil).text(t); !strings.Contains(r, "Reopened ticket #1") {
		t.Errorf("reopen: %q", r)
	}
	h.Eventually("the thread open again", func() bool { th := thread(h, ch); return !th.Archived && !th.Locked })
	if r := command(h, "bob", h.Channel("general"), "transcript", map[string]any{"number": 1}).text(t); !strings.Contains(r, "Only members with") {
		t.Errorf("transcript by the opener: %q", r)
	}
	if r := command(h, "sam", h.Channel("general"), "transcript", map[string]any{"number": 1}).text(t); !strings.Contains(r, "Transcript of ticket #1") ||
		!strings.Contains(r, "https://cdn.discordapp.com/attachments/") {
		t.Errorf("transcript: %q", r)
	}
	if n := h.Succeeded(http.MethodPost, "/users/@me/channels"); n != 1 {
		t.Errorf("%d DM channels opened, want 1", n)
	}
}
