package commands

import (
	"slices"
	"testing"

	"github.com/bwmarrin/discordgo"
)

// /tickets and /ticket keep the paths and option names documentation and
// outside tests drive, localized in every shipped language.
func TestTickets(t *testing.T) {
	t.Parallel()
	cmds, err := Merge(Tickets(catalog(t)))
	if err != nil {
		t.Fatal(err)
	}
	paths := Paths(cmds)
	for _, p := range []string{"/tickets/setup", "/tickets/panel", "/ticket/close", "/ticket/claim", "/ticket/add", "/ticket/remove", "/ticket/transcript"} {
		if !slices.Contains(paths, p) {
			t.Errorf("no %s in %v", p, paths)
		}
	}
	opts := map[string][]string{}
	for _, c := range cmds {
		for _, sub := range c.Options {
			for _, o := range sub.Options {
				opts["/"+c.Name+"/"+sub.Name] = append(opts["/"+c.Name+"/"+sub.Name], o.Name)
			}
		}
	}
	for path, want := range map[string][]string{
		"/tickets/setup": {"support-role", "mode", "channel", "category", "log-channel", "notify-channel"},
		"/tickets/panel": {"channel", "title"},
		"/tickets/form":  {"panel", "question-1", "question-2", "question-3", "question-4", "question-5"},
		"/ticket/close":  {"reason"},
		"/ticket/add":    {"member"},
		"/ticket/remove": {"member"},
	} {
		if !slices.Equal(opts[path], want) {
			t.Errorf("%s options = %v, want %v", path, opts[path], want)
		}
	}
	if *cmds[0].DefaultMemberPermissions != discordgo.PermissionManageGuild || cmds[1].DefaultMemberPermissions != nil {
		t.Error("/tickets must need Manage Server and /ticket nothing")
	}
	for _, l := range []discordgo.Locale{discordgo.German, discordgo.French, discordgo.Korean} {
		if cmds[1].Options[0].NameLocalizations[l] == "" {
			t.Errorf("/ticket close has no %s name", l)
		}
	}
}

// Completing names the paths whose options Discord autocompletes: the
// panel options of /tickets, and nothing else.
func TestTicketsCompleting(t *testing.T) {
	t.Parallel()
	cmds, err := Merge(Tickets(catalog(t)))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"/tickets/topic/add", "/tickets/topic/remove", "/tickets/form"}
	if got := Completing(cmds); !slices.Equal(got, want) {
		t.Errorf("completing = %v, want %v", got, want)
	}
}
