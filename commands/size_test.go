package commands

import (
	"strconv"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"
)

// Each field counts at its longest localization; choices count their
// names and values. herald's own commands stay within Discord's 8000.
func TestSize(t *testing.T) {
	t.Parallel()
	ko := map[discordgo.Locale]string{discordgo.Korean: "열쇠말"}
	c := &discordgo.ApplicationCommand{Name: "tickets", Description: "open and close", // 7 + 14
		NameLocalizations: &map[discordgo.Locale]string{discordgo.German: "tickets-verwalten"}, // 17, not 7
		Options: []*discordgo.ApplicationCommandOption{{
			Type: discordgo.ApplicationCommandOptionString, Name: "key", NameLocalizations: ko, Description: "a key", // 3 + 5
			Choices: []*discordgo.ApplicationCommandOptionChoice{{Name: "one", Value: "1"}, {Name: "twelve", Value: 12}}, // 3+1, 6+2
		}}}
	if got, want := size(c), 17+14+3+5+4+8; got != want {
		t.Errorf("size = %d, want %d", got, want)
	}
	cat := catalog(t)
	cmds, err := Merge(Herald(cat), RoleMenu(cat), Roles(cat), Tickets(cat))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cmds {
		if n := size(c); n > maxSize || n < 100 {
			t.Errorf("/%s holds %d characters", c.Name, n)
		}
	}
}

// Merge refuses a command past Discord's size, an option with both
// autocomplete and choices, and more slash commands than Discord keeps.
func TestMergeRefusesWhatDiscordWould(t *testing.T) {
	t.Parallel()
	var opts []*discordgo.ApplicationCommandOption
	for i := range 25 {
		opts = append(opts, &discordgo.ApplicationCommandOption{Type: discordgo.ApplicationCommandOptionSubCommand,
			Name: "s" + strings.Repeat("x", 20) + string(rune('a'+i)), Description: strings.Repeat("d", 100),
			Options: []*discordgo.ApplicationCommandOption{{Type: discordgo.ApplicationCommandOptionString, Name: "text",
				Description: strings.Repeat("t", 100), DescriptionLocalizations: map[discordgo.Locale]string{discordgo.French: strings.Repeat("f", 100)}}}})
	}
	big := []*discordgo.ApplicationCommand{{Name: "big", Description: "big", Options: opts}} // 6 + 25 * (22 + 100 + 4 + 100) = 5,656
	if _, err := Merge(big); err != nil {
		t.Fatalf("5,656 characters: %v", err)
	}
	for _, o := range opts {
		o.Options[0].Choices = []*discordgo.ApplicationCommandOptionChoice{{Name: strings.Repeat("c", 100), Value: "v"}}
	}
	if _, err := Merge(big); err == nil || !strings.Contains(err.Error(), "holds 8181 characters") {
		t.Errorf("8,181 characters: err = %v", err)
	}
	both := []*discordgo.ApplicationCommand{{Name: "pick", Description: "pick", Options: []*discordgo.ApplicationCommandOption{{
		Type: discordgo.ApplicationCommandOptionString, Name: "colour", Description: "colour", Autocomplete: true,
		Choices: []*discordgo.ApplicationCommandOptionChoice{{Name: "red", Value: "red"}}}}}}
	if _, err := Merge(both); err == nil || !strings.Contains(err.Error(), "autocomplete with choices") {
		t.Errorf("autocomplete and choices: err = %v", err)
	}
	var many []*discordgo.ApplicationCommand
	for i := range 101 {
		many = append(many, &discordgo.ApplicationCommand{Name: "c" + strconv.Itoa(i), Description: "one of many"})
	}
	if _, err := Merge(many[:100]); err != nil {
		t.Errorf("100 slash commands: %v", err)
	}
	if _, err := Merge(many); err == nil || !strings.Contains(err.Error(), "101 slash commands, Discord allows 100") {
		t.Errorf("101 slash commands: err = %v", err)
	}
}
