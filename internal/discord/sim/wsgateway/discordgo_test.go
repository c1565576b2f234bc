package wsgateway

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/jonboulle/clockwork"
)

// discordHost points discordgo's REST calls, which always go to
// https://discord.com, at the test server, through the server's own
// client: a parallel test's httptest server closes http.DefaultTransport's
// idle connections when it closes.
type discordHost struct {
	target *url.URL
	next   http.RoundTripper
}

func (d discordHost) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.URL.Scheme, r.URL.Host, r.Host = d.target.Scheme, d.target.Host, ""
	return d.next.RoundTrip(r)
}

// deletions collects the ids of MESSAGE_DELETE events a session handles.
type deletions struct {
	mu   sync.Mutex
	ids  []string
	more chan struct{}
}

func (d *deletions) add(id string) {
	d.mu.Lock()
	d.ids = append(d.ids, id)
	d.mu.Unlock()
	d.more <- struct{}{}
}

// waitFor waits until the id last arrives and requires exactly want so far.
func (d *deletions) waitFor(t *testing.T, want []string) {
	t.Helper()
	last := want[len(want)-1]
	for {
		d.mu.Lock()
		got := slices.Clone(d.ids)
		d.mu.Unlock()
		if slices.Contains(got, last) {
			if !slices.Equal(got, want) {
				t.Fatalf("discordgo handled MESSAGE_DELETE %v, want each of %v once, in order", got, want)
			}
			return
		}
		select {
		case <-d.more:
		case <-time.After(readTimeout):
			t.Fatalf("discordgo handled MESSAGE_DELETE %v, still waiting for %s", got, last)
		}
	}
}

func await[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(2 * readTimeout):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

func TestStockDiscordgoSession(t *testing.T) {
	t.Parallel()
	g := New(Config{
		Clock:     clockwork.NewFakeClock(), // heartbeats never time out here
		Authorize: func(tok string) bool { return tok == testToken },
		Ready:     testReady(testGuild(1 << 22)),
	})
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	t.Cleanup(g.Close)
	wsURL := "ws" + strings.TrimPrefix(srv.URL, "http") + "/gateway-ws"
	mux.HandleFunc("GET /api/v9/gateway", func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]string{"url": wsURL})
	})
	mux.Handle("/gateway-ws/", g) // discordgo adds the slash before ?v=9&encoding=json

	s, err := discordgo.New("Bot " + testToken)
	if err != nil {
		t.Fatal(err)
	}
	target, _ := url.Parse(srv.URL)
	s.Client = &http.Client{Transport: discordHost{target, srv.Client().Transport}, Timeout: readTimeout}
	// By default discordgo runs each handler in its own goroutine, which
	// loses the order the gateway delivered events in.
	s.SyncEvents = true

	ready := make(chan *discordgo.Ready, 1)
	resumed := make(chan struct{}, 2)
	interactions := make(chan *discordgo.InteractionCreate, 1)
	deleted := &deletions{more: make(chan struct{}, 16)}
	s.AddHandler(func(_ *discordgo.Session, r *discordgo.Ready) { ready <- r })
	s.AddHandler(func(*discordgo.Session, *discordgo.Resumed) { resumed <- struct{}{} })
	s.AddHandler(func(_ *discordgo.Session, i *discordgo.InteractionCreate) { interactions <- i })
	s.AddHandler(func(_ *discordgo.Session, m *discordgo.MessageDelete) { deleted.add(m.ID) })

	if err := s.Open(); err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	r := await(t, ready, "READY")
	if r.User == nil || r.User.ID != "100" || r.SessionID == "" || len(r.Guilds) != 1 {
		t.Fatalf("READY = %+v", r)
	}

	deleteEvent := func(n int) {
		g.Dispatch(guildOne, "MESSAGE_DELETE", map[string]string{
			"id": fmt.Sprint(n), "channel_id": "300", "guild_id": guildOne,
		})
	}
	var want []string
	expect := func(from, to int) {
		for n := from; n <= to; n++ {
			want = append(want, fmt.Sprint(n))
		}
	}

	deleteEvent(1)
	expect(1, 1)
	deleted.waitFor(t, want)

	// op 7: discordgo closes with 1012, reconnects and resumes.
	g.Reconnect()
	deleteEvent(2)
	deleteEvent(3)
	await(t, resumed, "RESUMED after op 7")
	deleteEvent(4)
	expect(2, 4)
	deleted.waitFor(t, want)

	// A server-side 4000 close: discordgo reconnects and resumes again.
	g.Disconnect(CloseUnknownError)
	deleteEvent(5)
	deleteEvent(6)
	await(t, resumed, "RESUMED after close 4000")
	deleteEvent(7)
	expect(5, 7)
	deleted.waitFor(t, want)

	g.Dispatch(guildOne, "INTERACTION_CREATE", json.RawMessage(`{
		"id": "900", "application_id": "200", "type": 2, "token": "interaction-token", "version": 1,
		"guild_id": "`+guildOne+`", "channel_id": "300",
		"member": {"user": {"id": "400", "username": "member"}, "roles": [], "permissions": "0"},
		"data": {"id": "500", "name": "ticket", "type": 1}
	}`))
	i := await(t, interactions, "INTERACTION_CREATE")
	if i.ID != "900" || i.Type != discordgo.InteractionApplicationCommand || i.ApplicationCommandData().Name != "ticket" {
		t.Errorf("InteractionCreate = %+v", i.Interaction)
	}
	if n := g.Sessions(); n != 1 {
		t.Errorf("Sessions() = %d, want the one resumed session", n)
	}
}
