package status_test

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/heraldtest"
	"github.com/herald-bot/herald/internal/testsupport/wait"
)

// The board shows the summary in a channel and is edited at most once per
// interval however many changes come, and not at all while nothing
// changes: six menus whose messages are deleted within about a second
// make at most two edits, the last showing all six; afterwards three
// looks pass without an edit.
func TestBoardEditsOncePerIntervalAndOnlyOnChange(t *testing.T) {
	t.Parallel()
	const interval = 2 * time.Second
	f := sim.DefaultFixture()
	f.Roles = append(f.Roles,
		sim.FixtureRole{Name: "Admin", Permissions: strconv.FormatInt(discordgo.PermissionManageGuild|discordgo.PermissionManageRoles, 10), Position: 9},
		sim.FixtureRole{Name: "Red", Permissions: "0", Position: 2})
	f.Members = append(f.Members, sim.FixtureMember{Username: "ada", Roles: []string{"Admin"}})
	h := heraldtest.New(t, heraldtest.WithFixture(f), heraldtest.WithEnv(map[string]string{"HERALD_BOARD_INTERVAL": interval.String()}))
	ada := h.As("ada")
	const menus = 6
	for i := range menus {
		name := fmt.Sprintf("menu%d", i)
		ada.Command("general", "/rolemenu/create", heraldtest.Opts{"name": name}).Reply()
		ada.Command("general", "/rolemenu/option/add", heraldtest.Opts{"menu": name, "role": h.Role("Red")}).Reply()
		ada.Command("general", "/rolemenu/publish", heraldtest.Opts{"menu": name, "channel": h.Channel("roles")}).Reply()
	}
	h.Eventually("the menus published", func() bool { return len(h.Messages(h.Channel("roles"))) == menus })

	if r := ada.Command("general", "/herald/board", heraldtest.Opts{"channel": h.Channel("general")}).Reply(); !strings.Contains(r.Content, "The status board goes to") {
		t.Fatalf("board: %q", r.Content)
	}
	var board *discordgo.Message
	h.Eventually("the board", func() bool {
		for _, m := range h.Messages(h.Channel("general")) {
			if strings.HasPrefix(m.Content, "**herald status** (kept up to date") {
				board = m
			}
		}
		return board != nil && strings.Contains(board.Content, "Nothing is waiting or failed.")
	})
	// What moves by itself from one second to the next, /herald status
	// shows and the board leaves out: it would be edited for nothing.
	if strings.Contains(board.Content, "buckets held") {
		t.Errorf("the board shows the buckets each process holds:\n%s", board.Content)
	}
	boardEdits := func() []time.Time {
		var at []time.Time
		for _, r := range h.Sim.Server.Requests() {
			if r.Method == http.MethodPatch && r.Path == "/channels/"+board.ChannelID+"/messages/"+board.ID && r.Status == http.StatusOK {
				at = append(at, r.Time)
			}
		}
		return at
	}
	boardText := func() string {
		for _, m := range h.Messages(board.ChannelID) {
			if m.ID == board.ID {
				return m.Content
			}
		}
		return ""
	}
	// The board's looks are counted, not waited for by the clock, so a
	// loaded machine slows the test down instead of failing it.
	looks := func() int {
		n := 0
		h.DB.QueryRow(t.Context(), `SELECT count(*) FROM river_job WHERE kind = 'status_board' AND state = 'completed'`).Scan(&n)
		return n
	}
	quiet := func(what string) int {
		t.Helper()
		from := looks()
		wait.Within(t, 10*interval, what, func() bool { return looks() >= from+3 })
		return len(boardEdits())
	}
	// The publishes' last jobs, and any job they started, may still
	// finish after the first look (the board counts running jobs by
	// lane): once none is left, one more look settles the board — one
	// that started after, not one that was finishing then (the first
	// look's message is seen before River records it completed); then
	// nothing changes for three looks.
	var done time.Time
	h.Eventually("the publishes done", func() bool {
		n := 0
		h.DB.QueryRow(t.Context(), `SELECT count(*), now() FROM river_job WHERE (kind LIKE 'rolemenu%' AND finalized_at IS NULL)
			OR (kind <> 'status_board' AND state IN ('available', 'pending', 'running', 'retryable'))`).Scan(&n, &done)
		return n == 0
	})
	h.Eventually("a look after the publishes", func() bool {
		n := 0
		h.DB.QueryRow(t.Context(), `SELECT count(*) FROM river_job WHERE kind = 'status_board' AND state = 'completed' AND attempted_at > $1`, done).Scan(&n)
		return n > 0
	})
	settled := len(boardEdits())
	shown := boardText()
	if n := quiet("three looks without a change") - settled; n != 0 {
		t.Fatalf("%d board edits while nothing changed; from:\n%s\nto:\n%s", n, shown, boardText())
	}

	start := time.Now()
	var sent time.Duration // until the last delete was answered
	for _, m := range h.Messages(h.Channel("roles")) {
		// The deletes share herald's buckets (the simulator knows one bot):
		// a 429 is waited out.
		wait.Until(t, "the delete of message "+m.ID, func() bool {
			res := h.Sim.Do(http.MethodDelete, "/channels/"+m.ChannelID+"/messages/"+m.ID, nil)
			if res.Status != http.StatusNoContent && res.Status != http.StatusTooManyRequests {
				t.Fatalf("delete: %d", res.Status)
			}
			return res.Status == http.StatusNoContent
		})
		sent = time.Since(start)
		// Paces the scenario: the six changes come spread over about a
		// second, across the board's interval, not all at once.
		time.Sleep(100 * time.Millisecond)
	}
	h.Eventually("the board to show all six menus missing", func() bool {
		for _, m := range h.Messages(h.Channel("general")) {
			if m.ID == board.ID {
				return strings.Count(m.Content, "message was deleted") == menus
			}
		}
		return false
	})
	// One edit per look that saw a change, looks an interval apart (less
	// the slack below): as many as fit in the time the deletes took, and
	// one more for the changes still on their way then — 1 or 2 when they
	// took a second, more only if a loaded machine stretched them.
	edits := boardEdits()[settled:]
	if most := 2 + int(sent/(interval-100*time.Millisecond)); len(edits) == 0 || len(edits) > most {
		t.Errorf("%d board edits for %d changes deleted within %s, want 1 to %d", len(edits), menus, sent.Round(time.Millisecond), most)
	}
	for i := 1; i < len(edits); i++ {
		if gap := edits[i].Sub(edits[i-1]); gap < interval-100*time.Millisecond {
			t.Errorf("board edits %s apart, want at least the interval %s", gap, interval)
		}
	}
	if after := quiet("three more looks without a change"); after != settled+len(edits) {
		t.Errorf("%d more board edits without a change", after-settled-len(edits))
	}
	// Each look scheduled its successor itself: none failed and was
	// retried into the next look, and one look waits.
	var failed, waiting int
	h.DB.QueryRow(t.Context(), `SELECT count(*) FILTER (WHERE errors IS NOT NULL), count(*) FILTER (WHERE state IN ('scheduled', 'available'))
		FROM river_job WHERE kind = 'status_board'`).Scan(&failed, &waiting)
	if failed != 0 || waiting != 1 {
		t.Errorf("board looks: %d failed, %d waiting; want 0 and 1", failed, waiting)
	}
}
