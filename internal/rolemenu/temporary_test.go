package rolemenu_test

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/herald-bot/herald/internal/heraldtest"
	"github.com/herald-bot/herald/internal/testsupport/wait"
)

var removedAt = regexp.MustCompile(`will be removed <t:(\d+):R>`)

// A temporary role outlives the herald that gave it: a member clicks,
// herald restarts, and the new process removes the role once its
// duration is over — not before, and once. A minute is the shortest
// duration an admin can set, so this test waits for one.
func TestRoleMenuTemporaryRoleAcrossRestart(t *testing.T) {
	t.Parallel()
	h := heraldtest.New(t, heraldtest.WithFixture(fixture()))
	msg := setup(t, h, "trial", heraldtest.Opts{}, "Red")
	if r := h.As("admin").Command("general", "/rolemenu/set/temporary", heraldtest.Opts{"menu": "trial", "duration": "1m"}).Reply(); !strings.Contains(r.Content, "removed 1m after") {
		t.Fatalf("set temporary: %q", r.Content)
	}
	reply := h.As("erin").Click(msg, button(t, msg, "Red")).Reply().Content
	m := removedAt.FindStringSubmatch(reply)
	if m == nil || !hasRole(h, "erin", "Red") {
		t.Fatalf("the click: %q, has Red %v", reply, hasRole(h, "erin", "Red"))
	}
	unix, _ := strconv.ParseInt(m[1], 10, 64)
	due := time.Unix(unix, 0)
	if left := time.Until(due); left < 50*time.Second || left > time.Minute {
		t.Fatalf("the role is due to go in %s, want about a minute", left)
	}

	h.Stop()
	h.Start()
	if !hasRole(h, "erin", "Red") {
		t.Fatal("the restart took the role before its time")
	}
	wait.Within(t, 2*time.Minute, "the temporary role to go", func() bool { return !hasRole(h, "erin", "Red") })
	removals := memberRoleCalls(h, http.MethodDelete, h.Member("erin"), h.Role("Red"))
	if len(removals) != 1 || removals[0].Time.Before(due) {
		t.Fatalf("removals %+v, want one at or after %s", removals, due.Format(time.TimeOnly))
	}
	h.Eventually("the grant to be forgotten", func() bool {
		var n int
		return h.DB.QueryRow(t.Context(), `SELECT count(*) FROM rolemenu_grants`).Scan(&n) == nil && n == 0
	})
}
