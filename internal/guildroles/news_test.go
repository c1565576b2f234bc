package guildroles_test

import (
	"context"
	"log/slog"
	"net/http"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/discord/rest"
	"github.com/herald-bot/herald/internal/discord/simtest"
	"github.com/herald-bot/herald/internal/discord/transport"
	"github.com/herald-bot/herald/internal/guildroles"
	"github.com/herald-bot/herald/internal/store/storetest"
	"github.com/herald-bot/herald/internal/testsupport/pgtest"
	"github.com/herald-bot/herald/internal/testsupport/wait"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// Two processes' readers on one database: while they listen, a snapshot
// outlives the short window; a role event one of them hears makes both
// read the guild again, the other through Postgres.
func TestChangesAreHeardByEveryProcess(t *testing.T) {
	t.Parallel()
	s, g, _ := reader(t, 0)
	db := storetest.Pool(t)
	e := transport.New(transport.Config{ApplicationID: s.ApplicationID(), Base: http.DefaultTransport})
	discord := rest.New(e, s.URL+"/api/v10", simtest.Token, s.ApplicationID())
	a := guildroles.New(discord, db, s.BotUserID(), 0)
	b := guildroles.New(discord, db, s.BotUserID(), 0)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	for _, r := range []*guildroles.Reader{a, b} {
		go r.Listen(ctx, slog.New(slog.DiscardHandler))
	}
	get := func(r *guildroles.Reader) {
		t.Helper()
		if _, err := r.Get(t.Context(), g.ID); err != nil {
			t.Fatal(err)
		}
	}
	// With a window of 0 every Get reads, until a reader listens.
	wait.Until(t, "both readers listening", func() bool {
		get(a)
		get(b)
		before := reads(s)
		get(a)
		get(b)
		return reads(s) == before
	})
	before := reads(s)
	for _, h := range a.Handlers() {
		if on, ok := h.(func(*discordgo.Session, *discordgo.GuildRoleUpdate)); ok {
			on(nil, &discordgo.GuildRoleUpdate{GuildRole: &discordgo.GuildRole{GuildID: g.ID, Role: &discordgo.Role{ID: g.Role("News")}}})
		}
	}
	get(a)
	if n := reads(s) - before; n != 2 {
		t.Fatalf("%d requests after the event, want 2: the reader that heard it reads again", n)
	}
	wait.Until(t, "the other process hearing of it", func() bool {
		get(b)
		return reads(s)-before == 4
	})
	get(a)
	get(b)
	if n := reads(s) - before; n != 4 {
		t.Errorf("%d requests, want 4: one read each, then snapshots again", n)
	}
}
