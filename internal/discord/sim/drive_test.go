package sim_test

import (
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/discord/sim"
)

func TestSubAndOpt(t *testing.T) {
	leaf := sim.Sub("add", sim.Opt(discordgo.ApplicationCommandOptionRole, "role", "1"))
	if leaf["type"] != int(discordgo.ApplicationCommandOptionSubCommand) {
		t.Errorf("a subcommand of options: %v", leaf)
	}
	if group := sim.Sub("option", leaf); group["type"] != int(discordgo.ApplicationCommandOptionSubCommandGroup) {
		t.Errorf("a subcommand of subcommands must be a group: %v", group)
	}
	if o := sim.Opt(discordgo.ApplicationCommandOptionString, "name", "x"); o["type"] != 3 || o["value"] != "x" {
		t.Errorf("option: %v", o)
	}
}

func TestChannelMessages(t *testing.T) {
	w := newWorld(t)
	ch := w.g.Channel("general")
	w.Do("POST", "/channels/"+ch+"/messages", map[string]any{"content": "hello"})
	msgs := w.Server.ChannelMessages(ch)
	if len(msgs) != 1 || msgs[0].Content != "hello" || msgs[0].ChannelID != ch {
		t.Fatalf("messages: %+v", msgs)
	}
	if got := w.Server.ChannelMessages("1"); len(got) != 0 {
		t.Errorf("an unknown channel: %v", got)
	}
}
