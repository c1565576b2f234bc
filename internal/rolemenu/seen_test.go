package rolemenu_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/heraldtest"
)

// seen is the member's row of roles from the gateway: its roles, and
// whether there is one.
func seen(t *testing.T, h *heraldtest.Herald, username string) ([]string, bool) {
	t.Helper()
	var roles []string
	err := h.DB.QueryRow(context.Background(), `SELECT roles FROM rolemenu_members_seen WHERE guild_id = $1 AND user_id = $2`,
		h.Guild.ID, h.Member(username)).Scan(&roles)
	if err != nil && !strings.Contains(err.Error(), "no rows") {
		t.Fatal(err)
	}
	return roles, err == nil
}

// reads counts the reads of a member.
func reads(h *heraldtest.Herald, username string) int {
	n := 0
	for _, r := range h.Sim.Server.Requests() {
		if r.Method == http.MethodGet && r.Path == "/guilds/"+h.Guild.ID+"/members/"+h.Member(username) {
			n++
		}
	}
	return n
}

// The gateway's member updates are kept for members whose clicks wait,
// newest first, and go with their last click; a member with none leaves
// no trace.
func TestMemberUpdatesKeptWhileClicksWait(t *testing.T) {
	t.Parallel()
	h := heraldtest.New(t, heraldtest.WithFixture(fixture()))
	msg := setup(t, h, "colours", heraldtest.Opts{}, "Red", "Blue")
	// erin's role change takes 12 s: her click waits meanwhile, long
	// enough for the test to see her update kept on a loaded machine.
	h.Sim.SetFault(sim.Fault{Route: "PUT /guilds/{guild_id}/members/{user_id}/roles/{role_id}", LatencyMS: 12000})

	h.Sim.SetMemberRole(h.Guild.ID, h.Member("frank"), h.Role("Blue"), true) // no click of frank's waits
	h.As("erin").Click(msg, heraldtest.Button(t, msg, "Red"))
	h.Eventually("erin's click to wait", func() bool {
		var n int
		h.DB.QueryRow(context.Background(), `SELECT count(*) FROM rolemenu_clicks WHERE user_id = $1`, h.Member("erin")).Scan(&n)
		return n == 1
	})
	h.Sim.SetMemberRole(h.Guild.ID, h.Member("erin"), h.Role("Blue"), true) // an admin gives erin Blue
	h.Eventually("erin's update kept", func() bool {
		roles, ok := seen(t, h, "erin")
		return ok && slices.Contains(roles, h.Role("Blue"))
	})
	if _, ok := seen(t, h, "frank"); ok {
		t.Error("frank's update was kept, with no click of his waiting")
	}
	h.Eventually("erin's change made and her update gone with her click", func() bool {
		_, ok := seen(t, h, "erin")
		return hasRole(h, "erin", "Red") && !ok
	})
}

// A click whose payload cannot say what the member has (herald's last
// change of their roles has an unknown outcome) is planned from a gateway
// update received well after the click instead of a read; an update
// that may have crossed the click does not serve, and the member is
// read. The updates are written as the gateway handler keeps them, dated
// as if they came over a minute after the click, which a test cannot wait
// for.
func TestGatewayUpdateServesInPlaceOfARead(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		after time.Duration // the update's received_at, from now
		reads int
	}{
		{"received well after the click", 2 * time.Minute, 0},
		{"may have crossed the click", 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := heraldtest.New(t, heraldtest.WithFixture(fixture()))
			msg := setup(t, h, "colours", heraldtest.Opts{}, "Red", "Blue")
			ctx := context.Background()
			bob := h.Member("bob")
			h.Sim.SetMemberRole(h.Guild.ID, bob, h.Role("Blue"), true)
			// herald changed bob's Blue a moment ago, outcome unknown.
			if _, err := h.DB.Exec(ctx, `INSERT INTO rolemenu_role_changes (guild_id, user_id, role_id, present, done_at)
				VALUES ($1, $2, $3, NULL, now())`, h.Guild.ID, bob, h.Role("Blue")); err != nil {
				t.Fatal(err)
			}
			if _, err := h.DB.Exec(ctx, `INSERT INTO rolemenu_members_seen (guild_id, user_id, roles, received_at)
				VALUES ($1, $2, $3, now() + $4::interval)`, h.Guild.ID, bob, []string{h.Role("Blue")}, tc.after.String()); err != nil {
				t.Fatal(err)
			}
			if r := h.As("bob").Click(msg, heraldtest.Button(t, msg, "Blue")).Reply(); !strings.Contains(r.Content, "Removed") {
				t.Errorf("bob's click: %q, want Blue removed", r.Content)
			}
			h.Eventually("bob's Blue removed", func() bool { return !hasRole(h, "bob", "Blue") })
			if n := reads(h, "bob"); n != tc.reads {
				t.Errorf("bob read %d times, want %d", n, tc.reads)
			}
			// The reply goes out before the click and the update are deleted.
			h.Eventually("bob's update gone with his last click", func() bool {
				_, ok := seen(t, h, "bob")
				return !ok
			})
		})
	}
}
