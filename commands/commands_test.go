package commands

import (
	"regexp"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/i18n"
	"github.com/herald-bot/herald/locales"
)

// Discord's rule for command and option names.
var validName = regexp.MustCompile(`^[-_\p{L}\p{N}]{1,32}$`)

func TestDefinitions(t *testing.T) {
	c, err := i18n.New(locales.FS)
	if err != nil {
		t.Fatal(err)
	}
	all := All(c)
	if len(all) != 1 || all[0].Name != Herald || *all[0].DefaultMemberPermissions != discordgo.PermissionManageGuild {
		t.Fatalf("commands = %+v", all)
	}
	cmd := all[0]
	for _, want := range []discordgo.Locale{discordgo.German, discordgo.French, discordgo.Korean, discordgo.EnglishUS, discordgo.EnglishGB} {
		if (*cmd.DescriptionLocalizations)[want] == "" || cmd.Options[0].NameLocalizations[want] == "" {
			t.Errorf("no %s localization", want)
		}
	}
	if got := cmd.Options[0].NameLocalizations[discordgo.German]; got != "aufgaben" {
		t.Errorf("German subcommand name = %q", got)
	}
	check := func(name, desc string) {
		if !validName.MatchString(name) || name != strings.ToLower(name) {
			t.Errorf("invalid command name %q", name)
		}
		if n := len([]rune(desc)); n < 1 || n > 100 {
			t.Errorf("description %q has %d characters, want 1 to 100", desc, n)
		}
	}
	check(cmd.Name, cmd.Description)
	for l, n := range *cmd.NameLocalizations {
		check(n, (*cmd.DescriptionLocalizations)[l])
	}
	for _, o := range cmd.Options {
		check(o.Name, o.Description)
		for l, n := range o.NameLocalizations {
			check(n, o.DescriptionLocalizations[l])
		}
	}
}
