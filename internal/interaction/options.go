package interaction

import (
	"github.com/bwmarrin/discordgo"
)

// Options are a command's option values, below its subcommand group and
// subcommand, with users, members, roles and channels taken from the
// interaction's resolved data as Discord sent them.
type Options struct {
	byName   map[string]*discordgo.ApplicationCommandInteractionDataOption
	resolved *discordgo.ApplicationCommandInteractionDataResolved
}

// Options reads the options of a command or autocomplete interaction.
func (in *Interaction) Options() Options {
	o := Options{byName: map[string]*discordgo.ApplicationCommandInteractionDataOption{}}
	if in.Type != discordgo.InteractionApplicationCommand && in.Type != discordgo.InteractionApplicationCommandAutocomplete {
		return o
	}
	d := in.ApplicationCommandData()
	o.resolved = d.Resolved
	opts := d.Options
	for len(opts) == 1 && (opts[0].Type == discordgo.ApplicationCommandOptionSubCommandGroup ||
		opts[0].Type == discordgo.ApplicationCommandOptionSubCommand) {
		opts = opts[0].Options
	}
	for _, opt := range opts {
		o.byName[opt.Name] = opt
	}
	return o
}

// String is a string option's value ("" when absent).
func (o Options) String(name string) string {
	if opt := o.byName[name]; opt != nil {
		if s, ok := opt.Value.(string); ok {
			return s
		}
	}
	return ""
}

// Int is an integer option's value.
func (o Options) Int(name string) (int64, bool) {
	if opt := o.byName[name]; opt != nil {
		if f, ok := opt.Value.(float64); ok {
			return int64(f), true
		}
	}
	return 0, false
}

// Bool is a boolean option's value.
func (o Options) Bool(name string) (value, ok bool) {
	if opt := o.byName[name]; opt != nil {
		value, ok = opt.Value.(bool)
	}
	return value, ok
}

// Role is a role option's role.
func (o Options) Role(name string) (*discordgo.Role, bool) {
	if o.resolved == nil {
		return nil, false
	}
	r, ok := o.resolved.Roles[o.String(name)]
	return r, ok
}

// Channel is a channel option's channel (partial, as Discord resolves it).
func (o Options) Channel(name string) (*discordgo.Channel, bool) {
	if o.resolved == nil {
		return nil, false
	}
	c, ok := o.resolved.Channels[o.String(name)]
	return c, ok
}

// User is a user option's user, and its guild member when the user is
// one (nil otherwise), with the member's User filled.
func (o Options) User(name string) (*discordgo.User, *discordgo.Member, bool) {
	if o.resolved == nil {
		return nil, nil, false
	}
	id := o.String(name)
	u, ok := o.resolved.Users[id]
	if !ok {
		return nil, nil, false
	}
	m := o.resolved.Members[id]
	if m != nil {
		m.User = u
	}
	return u, m, true
}

// Focused is the option a member is typing in an autocomplete request.
func (o Options) Focused() (name, value string) {
	for _, opt := range o.byName {
		if opt.Focused {
			s, _ := opt.Value.(string)
			return opt.Name, s
		}
	}
	return "", ""
}
