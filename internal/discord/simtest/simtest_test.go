package simtest_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"testing"
	"time"

	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/discord/simtest"
)

func TestTransportRewritesOnlyDiscord(t *testing.T) {
	t.Parallel()
	s := simtest.New(t)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusTeapot)
	}))
	t.Cleanup(other.Close)

	resp, err := s.Client.Get("https://discord.com/api/v10/users/@me")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("discord.com without a token: %d, want the simulator's 401", resp.StatusCode)
	}
	resp, err = s.Client.Get(other.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTeapot {
		t.Fatalf("other host answered %d; the transport rewrote it", resp.StatusCode)
	}
}

func TestSessionRESTAndHelpers(t *testing.T) {
	t.Parallel()
	s := simtest.New(t, simtest.WithFakeClock())
	if s.Clock == nil {
		t.Fatal("WithFakeClock gave no clock")
	}
	g := s.CreateGuild(sim.DefaultFixture())
	dg := s.Session()
	me, err := dg.User("@me")
	if err != nil || me.ID != g.BotUserID || !me.Bot {
		t.Fatalf("discordgo @me: %+v %v", me, err)
	}
	msg, err := dg.ChannelMessageSend(g.Channel("general"), "via discordgo")
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Messages(g.Channel("general")); len(got) != 1 || got[0].ID != msg.ID {
		t.Fatalf("messages %+v", got)
	}
	if err := dg.GuildMemberRoleAdd(g.ID, g.Member("dave"), g.Role("News")); err != nil {
		t.Fatal(err)
	}
	reqs := s.Requests()
	if len(reqs) != 3 || reqs[2].Route != "/guilds/{guild_id}/members/{user_id}/roles/{role_id}" || reqs[2].Status != 204 {
		t.Fatalf("requests %+v", reqs)
	}
	if st := s.Stats(); st.ByStatus["200"] != 2 || st.ByStatus["204"] != 1 {
		t.Fatalf("stats %+v", st)
	}
	s.SetFault(sim.Fault{Route: "GET /users/@me", Status: 503, Count: 1})
	if r := s.Do("GET", "/users/@me", nil); r.Status != 503 {
		t.Fatalf("fault not applied: %d", r.Status)
	}
	s.Clock.Advance(time.Minute)
	s.Reset()
	if st := s.Stats(); st.Requests != 0 {
		t.Fatalf("reset kept %d requests", st.Requests)
	}
}

// A Sim closing (as a parallel test ends) must leave other tests'
// connections alone: a request that had just taken an idle connection
// closed under it failed with "CloseIdleConnections called".
func TestClosingASimLeavesOthersConnections(t *testing.T) {
	t.Parallel()
	s := simtest.New(t)
	reused := func() bool {
		t.Helper()
		var got bool
		trace := &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { got = i.Reused }}
		req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(t.Context(), trace), http.MethodGet, "https://discord.com/api/v10/gateway", nil)
		res, err := s.Client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return got
	}
	reused()
	t.Run("another", func(t *testing.T) { simtest.New(t) })
	if !reused() {
		t.Fatal("closing another Sim closed this Sim's idle connection")
	}
}
