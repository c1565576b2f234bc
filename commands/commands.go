// Package commands is the catalog of everything herald shows in Discord's
// command picker: one file per feature declares its commands, with every
// name and description localized from locales/. A feature hands its
// declaration to the app (feature.Feature.Commands); the app merges all of
// them — several features may add subcommands to one command — checks
// them against Discord's rules and against the router, and
// `herald register-commands` sends the result.
package commands

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/i18n"
)

// Builder makes localized declarations. The name and description of the
// command or option at a path ("herald jobs", "rolemenu create name") come
// from the locale key "command_" + the path with '_' for ' ' and '-'
// (command_herald_jobs.name, command_herald_jobs.about).
type Builder struct{ c *i18n.Catalog }

// NewBuilder returns a builder localizing from c.
func NewBuilder(c *i18n.Catalog) Builder { return Builder{c: c} }

func key(path string) string {
	return "command_" + strings.NewReplacer(" ", "_", "-", "_").Replace(path)
}

func (b Builder) text(path, field string) (string, map[discordgo.Locale]string) {
	k := key(path) + "." + field
	out := map[discordgo.Locale]string{}
	for locale, s := range b.c.Localizations(k) {
		out[discordgo.Locale(locale)] = s
	}
	return b.c.For("en", "").T(k, nil), out
}

// Command declares a top-level slash command that only works in servers.
// perm, when not 0, is its default_member_permissions: Discord shows it to
// members with that permission only (the handler checks again).
func (b Builder) Command(name string, perm int64, opts ...*discordgo.ApplicationCommandOption) *discordgo.ApplicationCommand {
	n, names := b.text(name, "name")
	d, descs := b.text(name, "about")
	cmd := &discordgo.ApplicationCommand{Type: discordgo.ChatApplicationCommand, Name: n, NameLocalizations: &names,
		Description: d, DescriptionLocalizations: &descs, Options: opts,
		Contexts: &[]discordgo.InteractionContextType{discordgo.InteractionContextGuild}}
	if perm != 0 {
		cmd.DefaultMemberPermissions = &perm
	}
	return cmd
}

// Sub declares a subcommand at path ("herald jobs").
func (b Builder) Sub(path string, opts ...*discordgo.ApplicationCommandOption) *discordgo.ApplicationCommandOption {
	o := b.Option(path, discordgo.ApplicationCommandOptionSubCommand, false)
	o.Options = opts
	return o
}

// Group declares a subcommand group at path ("rolemenu option").
func (b Builder) Group(path string, subs ...*discordgo.ApplicationCommandOption) *discordgo.ApplicationCommandOption {
	o := b.Option(path, discordgo.ApplicationCommandOptionSubCommandGroup, false)
	o.Options = subs
	return o
}

// Option declares an option at path ("rolemenu create name"); set its
// other fields (Autocomplete, ChannelTypes, MaxLength...) on the result.
func (b Builder) Option(path string, typ discordgo.ApplicationCommandOptionType, required bool) *discordgo.ApplicationCommandOption {
	n, names := b.text(path, "name")
	d, descs := b.text(path, "about")
	return &discordgo.ApplicationCommandOption{Type: typ, Name: n, NameLocalizations: names,
		Description: d, DescriptionLocalizations: descs, Required: required}
}

// Merge joins the features' declarations into the list Discord gets:
// commands of one name become one, with the subcommands and groups of
// all. It refuses a path declared twice, commands of one name that differ
// in anything but their subcommands, and anything Discord would refuse.
func Merge(decls ...[]*discordgo.ApplicationCommand) ([]*discordgo.ApplicationCommand, error) {
	var out []*discordgo.ApplicationCommand
	byName := map[string]*discordgo.ApplicationCommand{}
	var errs []error
	for _, list := range decls {
		for _, c := range list {
			if err := validate(c); err != nil {
				errs = append(errs, err)
				continue
			}
			prev := byName[c.Name]
			if prev == nil {
				cp := *c
				byName[c.Name], out = &cp, append(out, &cp)
				continue
			}
			if prev.Description != c.Description || !samePerm(prev.DefaultMemberPermissions, c.DefaultMemberPermissions) ||
				!isGroup(prev.Options) || !isGroup(c.Options) {
				errs = append(errs, fmt.Errorf("commands: /%s declared twice, and not as subcommands of one command", c.Name))
				continue
			}
			merged, err := mergeOptions("/"+c.Name, prev.Options, c.Options)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			prev.Options = merged
		}
	}
	top := make([]named, len(out))
	for i, c := range out {
		if len(c.Options) > maxOptions {
			errs = append(errs, fmt.Errorf("commands: /%s has %d options, Discord allows %d", c.Name, len(c.Options), maxOptions))
		}
		if n := size(c); n > maxSize {
			errs = append(errs, fmt.Errorf("commands: /%s holds %d characters of names, descriptions and choices, Discord allows %d", c.Name, n, maxSize))
		}
		var locs map[discordgo.Locale]string
		if c.NameLocalizations != nil {
			locs = *c.NameLocalizations
		}
		top[i] = named{c.Name, locs}
		errs = append(errs, siblingsUnique("/"+c.Name, c.Options))
	}
	errs = append(errs, unique("", top))
	if len(out) > maxCommands {
		errs = append(errs, fmt.Errorf("commands: %d slash commands, Discord allows %d", len(out), maxCommands))
	}
	return out, errors.Join(errs...)
}

// named is a command or option's name and its localizations.
type named struct {
	name string
	locs map[discordgo.Locale]string
}

// siblingsUnique checks every level of options below path: Discord
// refuses the whole registration when two siblings show one name in any
// locale.
func siblingsUnique(path string, opts []*discordgo.ApplicationCommandOption) error {
	ns := make([]named, len(opts))
	var errs []error
	for i, o := range opts {
		ns[i] = named{o.Name, o.NameLocalizations}
		errs = append(errs, siblingsUnique(path+"/"+o.Name, o.Options))
	}
	return errors.Join(append(errs, unique(path, ns))...)
}

// unique reports siblings that share a name in some locale: the name a
// member of that locale sees, its localization or else the default name.
func unique(path string, siblings []named) error {
	locales := map[discordgo.Locale]bool{}
	for _, n := range siblings {
		for l := range n.locs {
			locales[l] = true
		}
	}
	var errs []error
	for _, l := range slices.Sorted(maps.Keys(locales)) {
		seen := map[string]string{}
		for _, n := range siblings {
			shown := n.name
			if s, ok := n.locs[l]; ok && s != "" {
				shown = s
			}
			if other, dup := seen[shown]; dup {
				errs = append(errs, fmt.Errorf("commands: %s/%s and %s/%s are both named %q in locale %s; Discord refuses the registration", path, other, path, n.name, shown, string(l)))
				continue
			}
			seen[shown] = n.name
		}
	}
	return errors.Join(errs...)
}

func samePerm(a, b *int64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

// isGroup reports whether opts are subcommands or groups (or none).
func isGroup(opts []*discordgo.ApplicationCommandOption) bool {
	for _, o := range opts {
		if o.Type != discordgo.ApplicationCommandOptionSubCommand && o.Type != discordgo.ApplicationCommandOptionSubCommandGroup {
			return false
		}
	}
	return true
}

func mergeOptions(path string, a, b []*discordgo.ApplicationCommandOption) ([]*discordgo.ApplicationCommandOption, error) {
	out := append([]*discordgo.ApplicationCommandOption(nil), a...)
	for _, o := range b {
		i := indexOf(out, o.Name)
		switch {
		case i < 0:
			out = append(out, o)
		case out[i].Type == discordgo.ApplicationCommandOptionSubCommandGroup && o.Type == out[i].Type && out[i].Description == o.Description:
			subs, err := mergeOptions(path+"/"+o.Name, out[i].Options, o.Options)
			if err != nil {
				return nil, err
			}
			cp := *out[i]
			cp.Options = subs
			out[i] = &cp
		default:
			return nil, fmt.Errorf("commands: %s/%s declared twice", path, o.Name)
		}
	}
	return out, nil
}

func indexOf(opts []*discordgo.ApplicationCommandOption, name string) int {
	for i, o := range opts {
		if o.Name == name {
			return i
		}
	}
	return -1
}

// Discord's limits on commands (docs: Application Commands).
const (
	maxOptions     = 25
	maxDescription = 100
	maxCommands    = 100 // slash commands in a scope: "100 global CHAT_INPUT commands"
)

// validName is Discord's rule for chat command and option names.
var validName = regexp.MustCompile(`^[-_\p{L}\p{N}]{1,32}$`)

func validate(c *discordgo.ApplicationCommand) error {
	var errs []error
	check := func(path, name, desc string) {
		if !validName.MatchString(name) || name != strings.ToLower(name) {
			errs = append(errs, fmt.Errorf("commands: %s: invalid name %q (lower case, 1 to 32 letters, digits, - or _)", path, name))
		}
		if n := len([]rune(desc)); n < 1 || n > maxDescription {
			errs = append(errs, fmt.Errorf("commands: %s: description of %d characters, want 1 to %d", path, n, maxDescription))
		}
	}
	path := "/" + c.Name
	check(path, c.Name, c.Description)
	if c.NameLocalizations != nil {
		var descs map[discordgo.Locale]string
		if c.DescriptionLocalizations != nil {
			descs = *c.DescriptionLocalizations
		}
		for l, n := range *c.NameLocalizations {
			check(path+" ("+string(l)+")", n, descs[l])
		}
	}
	var walk func(path string, opts []*discordgo.ApplicationCommandOption)
	walk = func(path string, opts []*discordgo.ApplicationCommandOption) {
		if len(opts) > maxOptions {
			errs = append(errs, fmt.Errorf("commands: %s has %d options, Discord allows %d", path, len(opts), maxOptions))
		}
		required := true
		for _, o := range opts {
			p := path + "/" + o.Name
			check(p, o.Name, o.Description)
			for l, n := range o.NameLocalizations {
				check(p+" ("+string(l)+")", n, o.DescriptionLocalizations[l])
			}
			if o.Required && !required {
				errs = append(errs, fmt.Errorf("commands: %s: a required option after an optional one", p))
			}
			if o.Autocomplete && len(o.Choices) > 0 {
				errs = append(errs, fmt.Errorf("commands: %s: autocomplete with choices (Discord allows one or the other)", p))
			}
			required = required && o.Required
			walk(p, o.Options)
		}
	}
	walk(path, c.Options)
	return errors.Join(errs...)
}

// Paths lists the routes of cmds as the router names them: each command
// without subcommands, and each subcommand ("/herald/jobs",
// "/rolemenu/option/add").
func Paths(cmds []*discordgo.ApplicationCommand) []string {
	return leaves(cmds, func([]*discordgo.ApplicationCommandOption) bool { return true })
}

// Completing lists the paths (as Paths names them) that have an option
// Discord autocompletes: each needs an autocomplete route.
func Completing(cmds []*discordgo.ApplicationCommand) []string {
	return leaves(cmds, func(opts []*discordgo.ApplicationCommandOption) bool {
		return slices.ContainsFunc(opts, func(o *discordgo.ApplicationCommandOption) bool { return o.Autocomplete })
	})
}

// leaves lists the paths of cmds' leaves (commands without subcommands,
// and subcommands) whose options keep holds for.
func leaves(cmds []*discordgo.ApplicationCommand, keep func([]*discordgo.ApplicationCommandOption) bool) []string {
	var out []string
	var walk func(path string, opts []*discordgo.ApplicationCommandOption)
	walk = func(path string, opts []*discordgo.ApplicationCommandOption) {
		leaf := true
		for _, o := range opts {
			if o.Type == discordgo.ApplicationCommandOptionSubCommand || o.Type == discordgo.ApplicationCommandOptionSubCommandGroup {
				leaf = false
				walk(path+"/"+o.Name, o.Options)
			}
		}
		if leaf && keep(opts) {
			out = append(out, path)
		}
	}
	for _, c := range cmds {
		walk("/"+c.Name, c.Options)
	}
	return out
}
