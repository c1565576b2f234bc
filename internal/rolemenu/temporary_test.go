package rolemenu_test

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/herald-bot/herald/internal/heraldtest"
)

var removedAt = regexp.MustCompile(`will be removed <t:(\d+):R>`)

// A temporary role outlives the herald that gave it: a member clicks,
// herald restarts, and the new process removes the role once its
// duration is over — not before, and once. A minute is the shortest
// duration an admin can set; herald's clock is moved to its end rather
// than waited for.
func TestRoleMenuTemporaryRoleAcrossRestart(t *testing.T) {
	t.Parallel()
	h := heraldtest.New(t, heraldtest.WithFixture(fixture()))
	msg := setup(t, h, "trial", heraldtest.Opts{}, "Red")
	if r := h.As("admin").Command("general", "/rolemenu/set/temporary", heraldtest.Opts{"menu": "trial", "duration": "1m"}).Reply(); !strings.Contains(r.Content, "removed 1m after") {
		t.Fatalf("set temporary: %q", r.Content)
	}
	reply := h.As("erin").Click(msg, heraldtest.Button(t, msg, "Red")).Reply().Content
	m := removedAt.FindStringSubmatch(reply)
	if m == nil || !hasRole(h, "erin", "Red") {
		t.Fatalf("the click: %q, has Red %v", reply, hasRole(h, "erin", "Red"))
	}
	unix, _ := strconv.ParseInt(m[1], 10, 64)
	due := time.Unix(unix, 0)
	if left := due.Sub(h.Clock.Now()); left < 50*time.Second || left > time.Minute {
		t.Fatalf("the role is due to go in %s, want about a minute", left)
	}

	h.Stop()
	h.Start()
	if !hasRole(h, "erin", "Red") {
		t.Fatal("the restart took the role before its time")
	}
	// The simulator keeps real time: a removal before herald's clock
	// reached the due time would be recorded before moved.
	moved := time.Now()
	h.Clock.Advance(due.Sub(h.Clock.Now()))
	h.Eventually("the temporary role to go", func() bool { return !hasRole(h, "erin", "Red") })
	removals := memberRoleCalls(h, http.MethodDelete, h.Member("erin"), h.Role("Red"))
	if len(removals) != 1 || removals[0].Time.Before(moved) {
		t.Fatalf("removals %+v, want one after herald's clock reached the due time (%s real time)", removals, moved.Format(time.TimeOnly))
	}
	h.Eventually("the grant to be forgotten", func() bool {
		var n int
		return h.DB.QueryRow(t.Context(), `SELECT count(*) FROM rolemenu_grants`).Scan(&n) == nil && n == 0
	})
}
