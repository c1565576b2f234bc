package commands

import (
	"fmt"

	"github.com/bwmarrin/discordgo"
)

// maxSize is the most characters a slash command's names, descriptions
// and choice values may hold together, each field counted at its longest
// localization (Discord's Application Commands: "Slash commands can have
// a maximum of 8000 characters for combined name, description, and value
// properties for each command, its options (including subcommands and
// groups), and choices"). Merged commands grow with every feature and
// locale, so Merge checks the whole.
const maxSize = 8000

// size is c's size as Discord counts it against maxSize.
func size(c *discordgo.ApplicationCommand) int {
	var names, descs map[discordgo.Locale]string
	if c.NameLocalizations != nil {
		names = *c.NameLocalizations
	}
	if c.DescriptionLocalizations != nil {
		descs = *c.DescriptionLocalizations
	}
	return longest(c.Name, names) + longest(c.Description, descs) + optionsSize(c.Options)
}

func optionsSize(opts []*discordgo.ApplicationCommandOption) int {
	n := 0
	for _, o := range opts {
		n += longest(o.Name, o.NameLocalizations) + longest(o.Description, o.DescriptionLocalizations) + optionsSize(o.Options)
		for _, ch := range o.Choices {
			n += longest(ch.Name, ch.NameLocalizations) + len([]rune(fmt.Sprint(ch.Value)))
		}
	}
	return n
}

// longest is the length in characters of the longest of a field's value
// and its localizations.
func longest(v string, locs map[discordgo.Locale]string) int {
	n := len([]rune(v))
	for _, l := range locs {
		n = max(n, len([]rune(l)))
	}
	return n
}
