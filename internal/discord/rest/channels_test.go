package rest_test

import (
	"errors"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/discord/rest"
	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/discord/transport"
)

// A ticket channel as the tickets feature makes one: private to the
// opener and a role, renamed, given an overwrite, then deleted.
func TestChannelsAndOverwrites(t *testing.T) {
	t.Parallel()
	w := newWorld(t, sim.DefaultFixture())
	ctx := t.Context()
	view := int64(discordgo.PermissionViewChannel)
	ch, err := w.c.CreateChannel(ctx, w.g.ID, rest.NewChannel{Name: "ticket-7", Type: discordgo.ChannelTypeGuildText,
		ParentID: w.g.Channel("Support"), Overwrites: []rest.Overwrite{
			{ID: w.g.ID, Type: discordgo.PermissionOverwriteTypeRole, Deny: view},
			{ID: w.g.Member("bob"), Type: discordgo.PermissionOverwriteTypeMember, Allow: view},
			// Without this the bot would lock itself out, as on Discord.
			{ID: w.s.BotUserID(), Type: discordgo.PermissionOverwriteTypeMember, Allow: view},
		}}, "ticket opened")
	if err != nil {
		t.Fatal(err)
	}
	if ch.ParentID != w.g.Channel("Support") || len(ch.PermissionOverwrites) != 3 {
		t.Fatalf("channel = %+v", ch)
	}
	name := "ticket-7-billing"
	if ch, err = w.c.ModifyChannel(ctx, ch.ID, rest.ChannelEdit{Name: &name}, "renamed"); err != nil || ch.Name != name {
		t.Fatalf("renamed = %+v, %v", ch, err)
	}
	if err := w.c.SetOverwrite(ctx, ch.ID, rest.Overwrite{ID: w.g.Role("Moderator"), Type: discordgo.PermissionOverwriteTypeRole, Allow: view}, "staff"); err != nil {
		t.Fatal(err)
	}
	if err := w.c.DeleteOverwrite(ctx, ch.ID, w.g.Member("bob"), "removed"); err != nil {
		t.Fatal(err)
	}
	got, err := w.c.Channel(ctx, ch.ID)
	if err != nil || len(got.PermissionOverwrites) != 3 {
		t.Fatalf("overwrites = %+v, %v", got.PermissionOverwrites, err)
	}
	all, err := w.c.GuildChannels(ctx, w.g.ID)
	if err != nil || len(all) != 5 {
		t.Errorf("guild channels = %d, %v", len(all), err)
	}
	admin := int64(discordgo.PermissionAdministrator)
	var api *transport.APIError
	if err := w.c.SetOverwrite(ctx, ch.ID, rest.Overwrite{ID: w.g.ID, Type: discordgo.PermissionOverwriteTypeRole, Allow: admin}, ""); !errors.As(err, &api) || api.Code != 50013 {
		t.Errorf("granting what the bot lacks: %v, want 50013", err)
	}
	if err := w.c.DeleteChannel(ctx, ch.ID, "ticket closed"); err != nil {
		t.Fatal(err)
	}
	if _, err := w.c.Channel(ctx, ch.ID); !errors.As(err, &api) || api.Code != 10003 {
		t.Errorf("deleted channel: %v", err)
	}
}

// A ticket thread: private, with its members, archived and locked; and a
// public thread started from a message.
func TestThreads(t *testing.T) {
	t.Parallel()
	w := newWorld(t, sim.DefaultFixture())
	ctx := t.Context()
	no := false
	th, err := w.c.CreateThread(ctx, w.g.Channel("general"), rest.NewThread{Name: "ticket-8",
		Type: discordgo.ChannelTypeGuildPrivateThread, Invitable: &no}, "ticket opened")
	if err != nil || th.Type != discordgo.ChannelTypeGuildPrivateThread {
		t.Fatalf("thread = %+v, %v", th, err)
	}
	if err := w.c.AddThreadMember(ctx, th.ID, w.g.Member("bob")); err != nil {
		t.Fatal(err)
	}
	if err := w.c.RemoveThreadMember(ctx, th.ID, w.g.Member("bob")); err != nil {
		t.Fatal(err)
	}
	if th, err = w.c.ArchiveThread(ctx, th.ID, true, "ticket closed"); err != nil || th.ThreadMetadata == nil ||
		!th.ThreadMetadata.Archived || !th.ThreadMetadata.Locked {
		t.Fatalf("archived = %+v, %v", th, err)
	}
	m, err := w.c.CreateMessage(ctx, w.g.Channel("general"), rest.NewMessage{Content: "discuss"})
	if err != nil {
		t.Fatal(err)
	}
	pub, err := w.c.CreateThreadFromMessage(ctx, w.g.Channel("general"), m.ID, rest.NewThread{Name: "discussion"}, "")
	if err != nil || pub.ID != m.ID {
		t.Errorf("thread from message = %+v, %v; Discord gives it the message's id", pub, err)
	}
}

// A DM to a member, and Discord's 50007 for one who does not take DMs.
func TestDirectMessages(t *testing.T) {
	t.Parallel()
	f := sim.DefaultFixture()
	f.Members = append(f.Members, sim.FixtureMember{Username: "erin", DMsClosed: true})
	w := newWorld(t, f)
	ctx := t.Context()
	dm, err := w.c.CreateDM(ctx, w.g.Member("bob"))
	if err != nil || dm.Type != discordgo.ChannelTypeDM {
		t.Fatalf("dm = %+v, %v", dm, err)
	}
	if again, _ := w.c.CreateDM(ctx, w.g.Member("bob")); again.ID != dm.ID {
		t.Errorf("a second DM channel %s, want %s", again.ID, dm.ID)
	}
	if _, err := w.c.CreateMessage(ctx, dm.ID, rest.NewMessage{Content: "your ticket was closed"}); err != nil {
		t.Fatal(err)
	}
	closed, err := w.c.CreateDM(ctx, w.g.Member("erin"))
	if err != nil {
		t.Fatal(err)
	}
	var api *transport.APIError
	if _, err := w.c.CreateMessage(ctx, closed.ID, rest.NewMessage{Content: "hi"}); !errors.As(err, &api) || api.Code != 50007 {
		t.Errorf("closed DMs: %v, want 50007", err)
	}
}
