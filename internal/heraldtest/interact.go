package heraldtest

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/discord/sim"
)

// Opts are a command's option values by name: strings, numbers and
// booleans as they are, users, channels and roles by id.
type Opts map[string]any

// Sent is an interaction a member made.
type Sent struct {
	sim.InteractionCreated
	h *Herald
}

// Member acts in Discord as one member of the fixture guild.
type Member struct {
	h      *Herald
	name   string
	locale string
}

// As acts as the fixture member with that username, whose Discord client
// is in English (en-US).
func (h *Herald) As(username string) Member { return Member{h: h, name: username} }

// Locale sets the member's Discord language ("de", "fr", "ko", "en-GB").
func (m Member) Locale(locale string) Member {
	m.locale = locale
	return m
}

// Command runs the slash command at path ("/herald/jobs",
// "/rolemenu/option/add") in the fixture channel named channel. Options
// are typed and nested as Discord sends them, from the command's
// declaration: an undeclared command or option, or a missing required
// one, fails the test, since Discord would never send it.
func (m Member) Command(channel, path string, opts Opts) Sent {
	m.h.t.Helper()
	return m.command("command", channel, path, opts, "")
}

// Autocomplete sends the request a member typing value into the option
// focused of the command at path causes.
func (m Member) Autocomplete(channel, path, focused, value string, opts Opts) Sent {
	m.h.t.Helper()
	all := Opts{focused: value}
	for k, v := range opts {
		all[k] = v
	}
	return m.command("autocomplete", channel, path, all, focused)
}

func (m Member) command(kind, channel, path string, opts Opts, focused string) Sent {
	h := m.h
	h.t.Helper()
	name, options, err := CommandOptions(h.commands, path, opts, focused, kind == "command")
	if err != nil {
		h.t.Fatalf("heraldtest: %v", err)
	}
	return m.interact(sim.InteractionRequest{Kind: kind, ChannelID: h.Channel(channel), Name: name, Options: options})
}

// CommandOptions is how Discord sends the slash command at path ("/rolemenu/option/add")
// of cmds: the command's name, and opts typed from its declaration inside
// the subcommand groups and subcommands on the path; focused marks the
// option being typed in an autocomplete request. An undeclared command or
// option, or a missing required one when required is set, is an error,
// since Discord would never send it.
func CommandOptions(cmds map[string]*discordgo.ApplicationCommand, path string, opts Opts, focused string, required bool) (string, []any, error) {
	names := strings.Split(strings.Trim(path, "/"), "/")
	cmd := cmds[names[0]]
	if cmd == nil {
		return "", nil, fmt.Errorf("/%s is not a declared command", names[0])
	}
	declared := cmd.Options
	var wrap []*discordgo.ApplicationCommandOption // the groups and subcommand on the path
	for _, name := range names[1:] {
		var next *discordgo.ApplicationCommandOption
		for _, o := range declared {
			if o.Name == name && (o.Type == discordgo.ApplicationCommandOptionSubCommand || o.Type == discordgo.ApplicationCommandOptionSubCommandGroup) {
				next = o
			}
		}
		if next == nil {
			return "", nil, fmt.Errorf("%s is not a declared command path", path)
		}
		wrap, declared = append(wrap, next), next.Options
	}
	leaf := []any{}
	seen := map[string]bool{}
	for _, o := range declared {
		v, ok := opts[o.Name]
		if !ok {
			if o.Required && required {
				return "", nil, fmt.Errorf("%s: required option %q missing", path, o.Name)
			}
			continue
		}
		seen[o.Name] = true
		opt := map[string]any{"type": int(o.Type), "name": o.Name, "value": v}
		if o.Name == focused {
			opt["focused"] = true
		}
		leaf = append(leaf, opt)
	}
	for name := range opts {
		if !seen[name] {
			return "", nil, fmt.Errorf("%s has no option %q", path, name)
		}
	}
	options := leaf
	for i := len(wrap) - 1; i >= 0; i-- {
		options = []any{map[string]any{"type": int(wrap[i].Type), "name": wrap[i].Name, "options": options}}
	}
	return cmd.Name, options, nil
}

// Click presses the button with customID on a message.
func (m Member) Click(msg *discordgo.Message, customID string) Sent {
	m.h.t.Helper()
	return m.interact(sim.InteractionRequest{Kind: "component", ChannelID: msg.ChannelID, MessageID: msg.ID, CustomID: customID})
}

// Select picks values in the string select menu with customID on a
// message.
func (m Member) Select(msg *discordgo.Message, customID string, values ...string) Sent {
	m.h.t.Helper()
	if values == nil {
		values = []string{}
	}
	return m.interact(sim.InteractionRequest{Kind: "component", ChannelID: msg.ChannelID, MessageID: msg.ID,
		CustomID: customID, Values: values})
}

// Submit submits the modal customID in the fixture channel named channel,
// with its text inputs' values by custom_id.
func (m Member) Submit(channel, customID string, fields map[string]string) Sent {
	m.h.t.Helper()
	rows := []any{}
	for id, v := range fields {
		rows = append(rows, map[string]any{"type": 1, "components": []any{
			map[string]any{"type": 4, "custom_id": id, "value": v},
		}})
	}
	return m.interact(sim.InteractionRequest{Kind: "modal", ChannelID: m.h.Channel(channel), CustomID: customID, Components: rows})
}

func (m Member) interact(req sim.InteractionRequest) Sent {
	m.h.t.Helper()
	req.GuildID, req.UserID, req.Locale = m.h.Guild.ID, m.h.Member(m.name), m.locale
	return Sent{InteractionCreated: m.h.Sim.Interact(req), h: m.h}
}

// Ack waits for herald's initial response and returns how the simulator
// saw it.
func (s Sent) Ack() sim.InteractionStatus {
	s.h.t.Helper()
	var st sim.InteractionStatus
	s.h.Eventually("the answer to interaction "+s.ID, func() bool {
		st = s.h.Sim.Interaction(s.ID)
		return st.Acked
	})
	return st
}

// Reply waits until the interaction's original response has content — at
// once for a message answer, once a job fills a deferred one — and
// returns it. It reads the simulator's control API, so waiting spends
// none of the rate limit herald shares on the interaction's webhook.
func (s Sent) Reply() *discordgo.Message {
	s.h.t.Helper()
	var m discordgo.Message
	s.h.Eventually("the reply to interaction "+s.ID, func() bool {
		original := s.h.Sim.Interaction(s.ID).Original
		if original == nil {
			return false
		}
		b, err := json.Marshal(original)
		if err != nil || json.Unmarshal(b, &m) != nil {
			s.h.t.Fatalf("heraldtest: the reply to %s: %v", s.ID, err)
		}
		return m.Content != "" || len(m.Embeds) > 0 || len(m.Components) > 0
	})
	return &m
}
