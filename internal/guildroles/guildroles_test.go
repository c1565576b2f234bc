package guildroles_test

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/herald-bot/herald/internal/discord/rest"
	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/discord/simtest"
	"github.com/herald-bot/herald/internal/discord/transport"
	"github.com/herald-bot/herald/internal/guildroles"
)

func reader(t *testing.T, window time.Duration) (*simtest.Sim, sim.FixtureResult, *guildroles.Reader) {
	t.Helper()
	s := simtest.New(t)
	g := s.CreateGuild(sim.DefaultFixture())
	e := transport.New(transport.Config{ApplicationID: s.ApplicationID(), Base: http.DefaultTransport})
	return s, g, guildroles.New(rest.New(e, s.URL+"/api/v10", simtest.Token, s.ApplicationID()), s.BotUserID(), window)
}

func reads(s *simtest.Sim) int {
	n := 0
	for _, r := range s.Requests() {
		if r.Method == http.MethodGet && (r.Route == "/guilds/{guild_id}" || r.Route == "/guilds/{guild_id}/members/{user_id}") {
			n++
		}
	}
	return n
}

// Fifty concurrent callers within the window share one read — one guild
// and one member request — and see the guild's roles, owner and the
// bot's position.
func TestConcurrentReadsShareOneFetch(t *testing.T) {
	t.Parallel()
	s, g, r := reader(t, time.Minute)
	var wg sync.WaitGroup
	snaps := make([]*guildroles.Snapshot, 50)
	for i := range snaps {
		wg.Go(func() {
			snap, err := r.Get(t.Context(), g.ID)
			if err != nil {
				t.Error(err)
			}
			snaps[i] = snap
		})
	}
	wg.Wait()
	if n := reads(s); n != 2 {
		t.Errorf("%d requests, want 2 (guild and bot member)", n)
	}
	snap := snaps[0]
	if snap == nil || snap.OwnerID == "" || snap.Roles[g.Role("News")] == nil {
		t.Fatalf("snapshot = %+v", snap)
	}
	if got, want := snap.BotTop(), snap.Roles[g.BotRoleID].Position; got != want || want == 0 {
		t.Errorf("bot top = %d, want its role's position %d", got, want)
	}
}

// After the window, or after Forget, the next caller reads again.
func TestWindowAndForget(t *testing.T) {
	t.Parallel()
	s, g, r := reader(t, 50*time.Millisecond)
	get := func() {
		if _, err := r.Get(t.Context(), g.ID); err != nil {
			t.Fatal(err)
		}
	}
	get()
	get()
	if n := reads(s); n != 2 {
		t.Fatalf("%d requests within the window, want 2", n)
	}
	time.Sleep(60 * time.Millisecond)
	get()
	if n := reads(s); n != 4 {
		t.Errorf("%d requests after the window, want 4", n)
	}
	r.Forget(g.ID)
	get()
	if n := reads(s); n != 6 {
		t.Errorf("%d requests after Forget, want 6", n)
	}
}
