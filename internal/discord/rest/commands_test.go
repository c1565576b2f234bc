package rest_test

import (
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/discord/sim"
)

func TestCommandsAndApplication(t *testing.T) {
	t.Parallel()
	w := newWorld(t, sim.DefaultFixture())
	ctx := t.Context()
	cmds := []*discordgo.ApplicationCommand{{Name: "ping", Description: "Is herald there?"}}
	for _, guild := range []string{"", w.g.ID} {
		got, err := w.c.OverwriteCommands(ctx, guild, cmds)
		if err != nil || len(got) != 1 || got[0].ID == "" || got[0].Name != "ping" {
			t.Errorf("overwrite in %q = %+v, %v", guild, got, err)
		}
	}
	if got, err := w.c.OverwriteCommands(ctx, w.g.ID, nil); err != nil || len(got) != 0 {
		t.Errorf("clearing = %+v, %v", got, err)
	}
	me, err := w.c.CurrentUser(ctx)
	if err != nil || me.ID != w.s.BotUserID() || !me.Bot {
		t.Errorf("current user = %+v, %v", me, err)
	}
	app, err := w.c.Application(ctx)
	if err != nil || app.ID != w.s.ApplicationID() || app.BotUserID != w.s.BotUserID() || app.Flags != 0 {
		t.Errorf("application = %+v, %v", app, err)
	}
	if _, err := w.c.OverwriteCommands(ctx, "", cmds); err != nil {
		t.Fatal(err)
	}
	listed, err := w.c.Commands(ctx, "")
	if err != nil || len(listed) != 1 || listed[0].Name != "ping" {
		t.Errorf("listed = %+v, %v", listed, err)
	}
}
