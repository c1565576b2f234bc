package feature

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/i18n"
	"github.com/herald-bot/herald/internal/interaction"
	"github.com/herald-bot/herald/internal/work"
)

func kit(t *testing.T) Kit {
	t.Helper()
	c, err := i18n.Shipped()
	if err != nil {
		t.Fatal(err)
	}
	return Kit{Catalog: c, Log: slog.New(slog.DiscardHandler), Routes: interaction.NewMux(), Jobs: work.NewRegistry()}
}

func declares(paths ...string) func(*i18n.Catalog) []*discordgo.ApplicationCommand {
	return func(*i18n.Catalog) []*discordgo.ApplicationCommand {
		var out []*discordgo.ApplicationCommand
		for _, p := range paths {
			name, sub, _ := strings.Cut(strings.TrimPrefix(p, "/"), "/")
			c := &discordgo.ApplicationCommand{Name: name, Description: name}
			if sub != "" {
				c.Options = []*discordgo.ApplicationCommandOption{{Type: discordgo.ApplicationCommandOptionSubCommand, Name: sub, Description: sub}}
			}
			out = append(out, c)
		}
		return out
	}
}

// completes declares /find with an option Discord autocompletes.
func completes(*i18n.Catalog) []*discordgo.ApplicationCommand {
	return []*discordgo.ApplicationCommand{{Name: "find", Description: "find", Options: []*discordgo.ApplicationCommandOption{
		{Type: discordgo.ApplicationCommandOptionString, Name: "what", Description: "what", Autocomplete: true}}}}
}

// suggesting routes /find and, with auto, its autocomplete.
func suggesting(auto string) func(Kit) error {
	return func(k Kit) error {
		h := func(context.Context, *interaction.Interaction) (*discordgo.InteractionResponse, error) {
			return interaction.Choices(), nil
		}
		k.Routes.Command("/find", h)
		if auto != "" {
			k.Routes.Autocomplete(auto, h)
		}
		return nil
	}
}

func routes(paths ...string) func(Kit) error {
	return func(k Kit) error {
		for _, p := range paths {
			k.Routes.Command(p, func(context.Context, *interaction.Interaction) (*discordgo.InteractionResponse, error) {
				return interaction.Ephemeral(p), nil
			})
		}
		return nil
	}
}

// Two features may share a command; each declared path needs a handler
// and each handler a declaration.
func TestBuildChecksRoutesAgainstDeclarations(t *testing.T) {
	t.Parallel()
	jobs := Feature{Name: "jobs", Commands: declares("/herald/jobs"), Build: routes("/herald/jobs")}
	board := Feature{Name: "board", Commands: declares("/herald/board"), Build: routes("/herald/board")}
	if err := Build(kit(t), jobs, board); err != nil {
		t.Fatal(err)
	}
	if err := Build(kit(t), Feature{Name: "find", Commands: completes, Build: suggesting("/find")}); err != nil {
		t.Fatalf("an autocomplete option with its route: %v", err)
	}
	cmds, err := Commands(kit(t).Catalog, jobs, board)
	if err != nil || len(cmds) != 1 || len(cmds[0].Options) != 2 {
		t.Errorf("merged commands = %+v, %v; want /herald with two subcommands", cmds, err)
	}
	for _, tc := range []struct {
		name string
		fs   []Feature
		want string
	}{
		{"declared, no handler", []Feature{{Name: "a", Commands: declares("/ping"), Build: routes()}}, `"/ping" is declared but has no handler`},
		{"handler, not declared", []Feature{{Name: "a", Build: routes("/ping")}}, `"/ping" has a handler but no declaration`},
		{"autocomplete option, no route", []Feature{{Name: "a", Commands: completes, Build: suggesting("")}}, `autocomplete "/find" is declared but has no handler`},
		{"autocomplete route, no option", []Feature{{Name: "a", Commands: declares("/find"), Build: suggesting("/find")}},
			`autocomplete "/find" has a handler but no declaration`},
		{"same name twice", []Feature{{Name: "a", Build: routes()}, {Name: "a", Build: routes()}}, `"a": a feature needs a name of its own`},
		{"no build", []Feature{{Name: "a"}}, "feature a: no Build"},
		{"build fails", []Feature{{Name: "a", Build: func(Kit) error { return errors.New("no table") }}}, "feature a: no table"},
	} {
		if err := Build(kit(t), tc.fs...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Build = %v, want %q", tc.name, err, tc.want)
		}
	}
}
