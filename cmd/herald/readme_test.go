package main

import (
	"context"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/discord/intents"
	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/discord/simtest"
	"github.com/herald-bot/herald/internal/heraldtest"
	"github.com/herald-bot/herald/internal/testsupport/logbuf"
	"github.com/herald-bot/herald/internal/testsupport/pgtest"
	"github.com/herald-bot/herald/internal/testsupport/wait"
)

// ownServer is the README's "Run herald on your own server" section.
func ownServer(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "\n## Run herald on your own server\n")
	if !ok {
		t.Fatal("the README has no section \"Run herald on your own server\"")
	}
	section, _, _ := strings.Cut(rest, "\n## ")
	return section
}

// fenced are the lines of the README section's code blocks of a language
// ("sh", or "" for slash commands), in order.
func fenced(section, lang string) []string {
	var out []string
	var open, match bool
	for _, l := range strings.Split(section, "\n") {
		l = strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(l, "```"):
			open, match = !open, !open && strings.TrimPrefix(l, "```") == lang
		case match && l != "":
			out = append(out, l)
		}
	}
	return out
}

var shellVar = regexp.MustCompile(`^export ([A-Z_]+)=`)

// TestReadmeOwnServer follows the README's "Run herald on your own
// server" against the simulator, step by step, as a new admin would: a
// new application (no privileged intent), the intents the README names
// switched on, `herald invite`'s URL followed into a server herald is
// not in yet, herald's role dragged above the menu's role, the README's
// shell commands (`herald migrate`, `herald run`) with the variables it
// exports — plus HERALD_DISCORD_API, the simulator's address — and its
// slash commands sent as Discord builds them from the commands herald
// registered, then a member's click.
func TestReadmeOwnServer(t *testing.T) {
	t.Parallel()
	section := ownServer(t)
	s := simtest.New(t, simtest.WithOptions(sim.Options{Token: simtest.Token}))
	g := s.CreateGuild(sim.Fixture{Name: "My server", Uninvited: true,
		Roles:    []sim.FixtureRole{{Name: "Red", Permissions: "0"}},
		Channels: []sim.FixtureChannel{{Name: "roles", Type: 0}},
		Members:  []sim.FixtureMember{{Username: "mia"}}})

	// Step 1, in the Developer Portal.
	portal := map[string]int64{intents.ServerMembers.Name: sim.AppFlagGatewayGuildMembersLimited,
		intents.MessageContent.Name: sim.AppFlagGatewayMessageContentLimited}
	var flags int64
	prose := strings.Join(strings.Fields(section), " ")
	for name, flag := range portal {
		if !strings.Contains(prose, "**"+name+"**") {
			t.Fatalf("step 1 does not name the %s", name)
		}
		flags |= flag
	}
	s.SetApplicationFlags(flags)

	vars := map[string]string{"HERALD_DISCORD_API": s.URL + "/api/v10", "HERALD_HTTP_ADDR": "127.0.0.1:0"}
	values := map[string]string{"DISCORD_TOKEN": simtest.Token, "DATABASE_URL": pgtest.URL(t)}
	lookup := func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	var logs logbuf.Buffer
	running := make(chan int, 1)
	var ran []string
	for _, line := range fenced(section, "sh") {
		if m := shellVar.FindStringSubmatch(line); m != nil {
			v, ok := values[m[1]]
			if !ok {
				t.Fatalf("the README exports %s, which the test has no value for", m[1])
			}
			vars[m[1]] = v
			continue
		}
		args := strings.Fields(line)
		if args[0] != "herald" {
			t.Fatalf("the README runs %q", line)
		}
		ran = append(ran, args[1])
		switch args[1] {
		case "invite":
			var out strings.Builder
			if code := run(ctx, args[1:], env{stdout: &out, stderr: &logs, lookup: lookup}); code != 0 {
				t.Fatalf("herald invite = %d\n%s", code, logs.String())
			}
			if strings.Contains(out.String(), "OFF") {
				t.Fatalf("herald invite finds an intent of step 1 off:\n%s", out.String())
			}
			// The owner opens the URL and picks the server, then drags
			// herald's role above Red.
			botRole := s.Authorize(inviteURL(t, out.String()).String(), g.ID)
			s.MoveRole(g.ID, botRole, 2)
		case "run":
			go func() { running <- run(ctx, args[1:], env{stdout: io.Discard, stderr: &logs, lookup: lookup}) }()
			waitLog(t, &logs, "gateway ready")
		default:
			if code := run(ctx, args[1:], env{stdout: io.Discard, stderr: &logs, lookup: lookup}); code != 0 {
				t.Fatalf("herald %s = %d\n%s", args[1], code, logs.String())
			}
		}
	}
	if !slices.Equal(ran, []string{"invite", "migrate", "run"}) {
		t.Fatalf("the README runs herald %v, want invite, migrate, run", ran)
	}

	// Step 4: the slash commands, as Discord builds them from what herald
	// registered.
	var registered []*discordgo.ApplicationCommand
	s.Do("GET", "/applications/"+s.ApplicationID()+"/commands?with_localizations=true", nil).JSON(t, &registered)
	cmds := map[string]*discordgo.ApplicationCommand{}
	for _, c := range registered {
		cmds[c.Name] = c
	}
	slash := fenced(section, "")
	if len(slash) == 0 {
		t.Fatal("the README shows no slash command")
	}
	for _, line := range slash {
		name, options := slashCommand(t, cmds, g, line)
		in := s.Interact(sim.InteractionRequest{GuildID: g.ID, ChannelID: g.Channel("roles"), UserID: g.Member("owner"),
			Kind: "command", Name: name, Options: options})
		// An admin reads the answer before the next command.
		wait.Until(t, "the answer to "+line, func() bool { c, _ := s.Interaction(in.ID).Original["content"].(string); return c != "" })
	}
	var menu *discordgo.Message
	wait.Until(t, "the menu in #roles", func() bool {
		for _, m := range s.Messages(g.Channel("roles")) {
			if len(m.Components) > 0 {
				menu = m
				return true
			}
		}
		return false
	})
	button := menu.Components[0].(*discordgo.ActionsRow).Components[0].(*discordgo.Button)
	s.Interact(sim.InteractionRequest{GuildID: g.ID, ChannelID: menu.ChannelID, UserID: g.Member("mia"), Kind: "component",
		MessageID: menu.ID, CustomID: button.CustomID})
	wait.Until(t, "mia has Red", func() bool {
		for _, m := range s.Guild(g.ID).Members {
			if m.ID == g.Member("mia") {
				return slices.Contains(m.Roles, g.Role("Red"))
			}
		}
		return false
	})
	stop()
	if code := <-running; code != 0 {
		t.Fatalf("herald run = %d\n%s", code, logs.String())
	}
	// Every request herald sent carried its User-Agent; Discord refused
	// none for lacking one.
	if st := s.Stats(); st.RefusedUserAgent != 0 {
		t.Fatalf("%d requests refused for their User-Agent", st.RefusedUserAgent)
	}
	for _, r := range s.Server.Requests() {
		if !strings.HasPrefix(r.UserAgent, "DiscordBot (https://github.com/herald-bot/herald, ") {
			t.Errorf("%s %s sent with User-Agent %q", r.Method, r.Route, r.UserAgent)
		}
	}
}

// slashCommand turns a README line such as "/rolemenu option add
// menu:colours role:@Red" into the command's name and options as Discord
// sends them: @role and #channel by name, numbers and booleans typed.
func slashCommand(t *testing.T, cmds map[string]*discordgo.ApplicationCommand, g sim.FixtureResult, line string) (string, []any) {
	t.Helper()
	var path []string
	opts := heraldtest.Opts{}
	for _, f := range strings.Fields(line) {
		k, v, ok := strings.Cut(f, ":")
		if !ok {
			path = append(path, strings.TrimPrefix(f, "/"))
			continue
		}
		opts[k] = v
	}
	name, options, err := heraldtest.CommandOptions(cmds, "/"+strings.Join(path, "/"), opts, "", true)
	if err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	var typed func(list []any)
	typed = func(list []any) {
		for _, o := range list {
			o := o.(map[string]any)
			if sub, ok := o["options"].([]any); ok {
				typed(sub)
				continue
			}
			v := o["value"].(string)
			switch discordgo.ApplicationCommandOptionType(o["type"].(int)) {
			case discordgo.ApplicationCommandOptionRole:
				o["value"] = g.Role(strings.TrimPrefix(v, "@"))
			case discordgo.ApplicationCommandOptionChannel:
				o["value"] = g.Channel(strings.TrimPrefix(v, "#"))
			case discordgo.ApplicationCommandOptionInteger:
				n, err := strconv.Atoi(v)
				if err != nil {
					t.Fatalf("%s: %v", line, err)
				}
				o["value"] = n
			case discordgo.ApplicationCommandOptionBoolean:
				o["value"] = v == "true"
			}
			if o["value"] == "" {
				t.Fatalf("%s: %q names nothing in the server", line, v)
			}
		}
	}
	typed(options)
	return name, options
}
