package commands

import (
	"slices"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/i18n"
)

func catalog(t *testing.T) *i18n.Catalog {
	t.Helper()
	c, err := i18n.Shipped()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// /herald is localized in every shipped language and hidden from members
// without Manage Server.
func TestHerald(t *testing.T) {
	t.Parallel()
	cmds, err := Merge(Herald(catalog(t)))
	if err != nil {
		t.Fatal(err)
	}
	if len(cmds) != 1 || cmds[0].Name != "herald" || *cmds[0].DefaultMemberPermissions != discordgo.PermissionManageGuild {
		t.Fatalf("commands = %+v", cmds)
	}
	cmd := cmds[0]
	for _, want := range []discordgo.Locale{discordgo.German, discordgo.French, discordgo.Korean, discordgo.EnglishUS, discordgo.EnglishGB} {
		if (*cmd.DescriptionLocalizations)[want] == "" || cmd.Options[0].NameLocalizations[want] == "" {
			t.Errorf("no %s localization", want)
		}
	}
	if got := cmd.Options[0].NameLocalizations[discordgo.German]; got != "aufgaben" {
		t.Errorf("German subcommand name = %q", got)
	}
	if got := Paths(cmds); !slices.Equal(got, []string{"/herald/jobs", "/herald/status", "/herald/board"}) {
		t.Errorf("paths = %v", got)
	}
}

// Two features may add subcommands to one command, also inside one
// group; a path declared twice, or two different commands of one name,
// are refused, as is anything Discord would refuse.
func TestMerge(t *testing.T) {
	t.Parallel()
	sub := func(name string, opts ...*discordgo.ApplicationCommandOption) *discordgo.ApplicationCommandOption {
		return &discordgo.ApplicationCommandOption{Type: discordgo.ApplicationCommandOptionSubCommand, Name: name, Description: name, Options: opts}
	}
	group := func(name string, subs ...*discordgo.ApplicationCommandOption) *discordgo.ApplicationCommandOption {
		return &discordgo.ApplicationCommandOption{Type: discordgo.ApplicationCommandOptionSubCommandGroup, Name: name, Description: name, Options: subs}
	}
	cmd := func(name string, opts ...*discordgo.ApplicationCommandOption) []*discordgo.ApplicationCommand {
		return []*discordgo.ApplicationCommand{{Name: name, Description: "about " + name, Options: opts}}
	}
	text := &discordgo.ApplicationCommandOption{Type: discordgo.ApplicationCommandOptionString, Name: "text", Description: "text", Required: true}

	merged, err := Merge(cmd("herald", sub("jobs")), cmd("herald", sub("status"), group("board", sub("set"))),
		cmd("herald", group("board", sub("clear"))), cmd("echo", text))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"/herald/jobs", "/herald/status", "/herald/board/set", "/herald/board/clear", "/echo"}
	if got := Paths(merged); !slices.Equal(got, want) {
		t.Errorf("paths = %v, want %v", got, want)
	}

	optional := &discordgo.ApplicationCommandOption{Type: discordgo.ApplicationCommandOptionString, Name: "note", Description: "note"}
	for _, tc := range []struct {
		name  string
		decls [][]*discordgo.ApplicationCommand
		want  string
	}{
		{"path twice", [][]*discordgo.ApplicationCommand{cmd("herald", sub("jobs")), cmd("herald", sub("jobs"))}, "/herald/jobs declared twice"},
		{"two commands of one name", [][]*discordgo.ApplicationCommand{cmd("echo", text), cmd("echo", text)}, "/echo declared twice"},
		{"upper case", [][]*discordgo.ApplicationCommand{cmd("Echo")}, `invalid name "Echo"`},
		{"long description", [][]*discordgo.ApplicationCommand{{{Name: "x", Description: strings.Repeat("d", 101)}}}, "description of 101 characters"},
		{"required after optional", [][]*discordgo.ApplicationCommand{cmd("x", optional, text)}, "required option after an optional one"},
	} {
		if _, err := Merge(tc.decls...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
}

// Discord refuses a registration in which two sibling commands or options
// show one name in some locale (a localization, or the default name where
// a sibling has none), so herald refuses it before sending.
func TestMergeRefusesSiblingsNamedAlikeInALocale(t *testing.T) {
	t.Parallel()
	about := func(names map[discordgo.Locale]string) map[discordgo.Locale]string {
		out := map[discordgo.Locale]string{}
		for l, n := range names {
			out[l] = "about " + n
		}
		return out
	}
	sub := func(name string, locs map[discordgo.Locale]string) *discordgo.ApplicationCommandOption {
		return &discordgo.ApplicationCommandOption{Type: discordgo.ApplicationCommandOptionSubCommand, Name: name, Description: name,
			NameLocalizations: locs, DescriptionLocalizations: about(locs)}
	}
	cmd := func(name string, locs map[discordgo.Locale]string, opts ...*discordgo.ApplicationCommandOption) []*discordgo.ApplicationCommand {
		descs := about(locs)
		return []*discordgo.ApplicationCommand{{Name: name, Description: "about " + name, NameLocalizations: &locs,
			DescriptionLocalizations: &descs, Options: opts}}
	}
	ko := func(n string) map[discordgo.Locale]string { return map[discordgo.Locale]string{discordgo.Korean: n} }
	for _, tc := range []struct {
		name  string
		decls [][]*discordgo.ApplicationCommand
		want  string
	}{
		{"two subcommands", [][]*discordgo.ApplicationCommand{cmd("tickets", nil, sub("panel", ko("패널")), sub("panels", ko("패널")))},
			`/tickets/panel and /tickets/panels are both named "패널" in locale ko`},
		{"a localization equal to a sibling's default name", [][]*discordgo.ApplicationCommand{cmd("tickets", nil, sub("panel", nil), sub("panels", ko("panel")))},
			`are both named "panel" in locale ko`},
		{"two commands", [][]*discordgo.ApplicationCommand{cmd("ticket", ko("티켓")), cmd("tickets", ko("티켓"))},
			`/ticket and /tickets are both named "티켓" in locale ko`},
		{"inside a group", [][]*discordgo.ApplicationCommand{cmd("rolemenu", nil, &discordgo.ApplicationCommandOption{
			Type: discordgo.ApplicationCommandOptionSubCommandGroup, Name: "option", Description: "option",
			Options: []*discordgo.ApplicationCommandOption{sub("add", ko("추가")), sub("edit", ko("추가"))}})},
			`/rolemenu/option/add and /rolemenu/option/edit are both named "추가"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Merge(tc.decls...); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Merge = %v, want an error saying %s", err, tc.want)
			}
		})
	}
	if _, err := Merge(cmd("tickets", nil, sub("panel", ko("패널")), sub("panels", ko("모든패널")))); err != nil {
		t.Fatalf("distinct names refused: %v", err)
	}
}
