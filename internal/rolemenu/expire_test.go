package rolemenu

import (
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/herald-bot/herald/internal/clock"
	"github.com/herald-bot/herald/internal/discord/rest"
	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/discord/simtest"
	"github.com/herald-bot/herald/internal/discord/transport"
	"github.com/herald-bot/herald/internal/guildroles"
	"github.com/herald-bot/herald/internal/store/storetest"
	"github.com/herald-bot/herald/internal/work/worktest"
)

// The expiry job alone, one attempt at a time: a due grant loses its role
// on Discord and its row; a grant moved later since keeps both; a grant
// already gone costs no call.
func TestExpireWorker(t *testing.T) {
	t.Parallel()
	s := simtest.New(t)
	g := s.CreateGuild(sim.DefaultFixture())
	discord := rest.New(transport.New(transport.Config{ApplicationID: s.ApplicationID()}), s.URL+"/api/v10", simtest.Token, s.ApplicationID())
	pool := storetest.Pool(t)
	w := &expireWorker{deps: &deps{db: pool, discord: discord, roles: guildroles.New(discord, nil, g.BotUserID, 0),
		log: slog.New(slog.DiscardHandler), clock: &clock.Clock{}}}
	removals := func() int {
		n := 0
		for _, r := range s.Requests() {
			if r.Method == http.MethodDelete && r.Route == "/guilds/{guild_id}/members/{user_id}/roles/{role_id}" && r.Status < 300 {
				n++
			}
		}
		return n
	}
	for _, tc := range []struct {
		name, member, role string
		due                time.Duration // from now; 0: no grant at all
		removed            int           // role removals the attempt makes
		kept               bool          // the grant's row stays
	}{
		{"due", "bob", "News", -time.Minute, 1, false},
		{"granted again since", "carol", "Events", time.Hour, 0, true},
		{"already removed", "carol", "Gaming", 0, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := expireArgs{GuildID: g.ID, UserID: g.Member(tc.member), RoleID: g.Role(tc.role)}
			if tc.due != 0 {
				if _, err := pool.Exec(t.Context(), `INSERT INTO rolemenu_grants (guild_id, user_id, role_id, expires_at) VALUES ($1, $2, $3, $4)`,
					args.GuildID, args.UserID, args.RoleID, time.Now().Add(tc.due)); err != nil {
					t.Fatal(err)
				}
			}
			before := removals()
			res := worktest.Work(t, pool, w, args, nil)
			if res.EventKind != river.EventKindJobCompleted {
				t.Fatalf("attempt ended %s (%v), want completed", res.EventKind, res.Job.Errors)
			}
			if n := removals() - before; n != tc.removed {
				t.Errorf("%d role removals on Discord, want %d", n, tc.removed)
			}
			var rows int
			if err := pool.QueryRow(t.Context(), `SELECT count(*) FROM rolemenu_grants WHERE user_id = $1 AND role_id = $2`, args.UserID, args.RoleID).Scan(&rows); err != nil {
				t.Fatal(err)
			}
			if (rows == 1) != tc.kept {
				t.Errorf("%d grant rows left, want kept=%t", rows, tc.kept)
			}
		})
	}
}
