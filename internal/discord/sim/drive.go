package sim

import (
	"encoding/json"
	"strings"

	"github.com/bwmarrin/discordgo"
)

// Programs that drive the simulator in-process (herald bench, herald
// demo) build commands and read channels with these, as Discord shapes
// them.

// Sub nests options under a subcommand, or a group when they are
// subcommands themselves, as Discord sends them.
func Sub(name string, options ...any) map[string]any {
	typ := discordgo.ApplicationCommandOptionSubCommand
	if len(options) > 0 {
		if o, ok := options[0].(map[string]any); ok && o["options"] != nil {
			typ = discordgo.ApplicationCommandOptionSubCommandGroup
		}
	}
	return map[string]any{"type": int(typ), "name": name, "options": options}
}

// Opt is one command option with its value.
func Opt(t discordgo.ApplicationCommandOptionType, name, value string) map[string]any {
	return map[string]any{"type": int(t), "name": name, "value": value}
}

// ChannelMessages is Messages decoded as discordgo reads them, oldest
// first; none for a channel that does not exist.
func (s *Server) ChannelMessages(channelID string) []*discordgo.Message {
	raw, _ := s.Messages(channelID)
	out := make([]*discordgo.Message, 0, len(raw))
	for _, m := range raw {
		b, _ := json.Marshal(m)
		var msg discordgo.Message
		if json.Unmarshal(b, &msg) == nil {
			out = append(out, &msg)
		}
	}
	return out
}

// CountMessages counts the messages in a channel whose content contains
// text: how a test or a bench tells how often herald said something.
func (s *Server) CountMessages(channelID, text string) int {
	n := 0
	for _, m := range s.ChannelMessages(channelID) {
		if strings.Contains(m.Content, text) {
			n++
		}
	}
	return n
}
