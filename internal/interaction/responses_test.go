package interaction_test

import (
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/interaction"
)

// Buttons reads a message's buttons across rows, skipping other
// components (a select menu).
func TestButtons(t *testing.T) {
	t.Parallel()
	m := &discordgo.Message{Components: []discordgo.MessageComponent{
		&discordgo.ActionsRow{Components: []discordgo.MessageComponent{&discordgo.Button{Label: "Red", CustomID: "a"}, &discordgo.Button{Label: "Blue", CustomID: "b"}}},
		&discordgo.ActionsRow{Components: []discordgo.MessageComponent{&discordgo.SelectMenu{CustomID: "s"}}},
		&discordgo.ActionsRow{Components: []discordgo.MessageComponent{&discordgo.Button{Label: "Green", CustomID: "c"}}},
	}}
	got := interaction.Buttons(m)
	if len(got) != 3 || got[0].CustomID != "a" || got[1].Label != "Blue" || got[2].CustomID != "c" {
		t.Errorf("buttons = %+v", got)
	}
}
