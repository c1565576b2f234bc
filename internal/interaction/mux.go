package interaction

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/interaction/customid"
)

// Handler answers an interaction on the fast path: it validates, may
// write rows and enqueue work in the fast-path transaction (Interaction.Tx,
// Enqueue), and returns the initial response, usually deferred. It must
// not call Discord: the fast path sends the response for it.
type Handler func(ctx context.Context, in *Interaction) (*discordgo.InteractionResponse, error)

// Middleware wraps a handler: guild only, a permission, a cooldown.
type Middleware func(Handler) Handler

// Mux routes interactions the way chi routes URL paths (after disgo's
// handler.Mux): application commands by path — "/herald/jobs",
// "/rolemenu/option/add" for a subcommand in a group — and their
// autocomplete by the same path; components and modals by custom-ID
// pattern ("rolemenu:1:pick:{menu}:{option}", see customid.Fill). Route and
// Group scope middleware; a middleware applies to the routes registered
// after it in its group and the groups within.
//
// Registration mistakes — a route registered twice, a bad pattern, Use
// after a route — are collected and reported by Check at start-up.
type Mux struct {
	prefix string
	mws    []Middleware
	routed bool // a route was registered here: Use is too late
	t      *table
}

// table is the routes a Mux and all its groups share.
type table struct {
	commands     map[string]Handler
	autocomplete map[string]Handler
	components   []controlRoute
	modals       []controlRoute
	errs         []error
}

type controlRoute struct {
	p customid.Pattern
	h Handler
}

// NewMux returns a mux with no routes: every interaction is answered as
// outdated until features register theirs.
func NewMux() *Mux {
	return &Mux{t: &table{commands: map[string]Handler{}, autocomplete: map[string]Handler{}}}
}

// Use adds middleware to the routes registered after it in this group.
func (m *Mux) Use(mws ...Middleware) {
	if m.routed {
		m.t.errs = append(m.t.errs, fmt.Errorf("interaction: Use after routes in %q: register middleware first", m.prefix))
		return
	}
	m.mws = append(m.mws, mws...)
}

// Route registers routes under a command path prefix ("/rolemenu") with
// middleware of their own.
func (m *Mux) Route(prefix string, fn func(r *Mux)) {
	fn(&Mux{prefix: m.prefix + cleanPath(prefix), mws: slices.Clone(m.mws), t: m.t})
}

// Group registers routes with middleware of their own, under the same
// prefix.
func (m *Mux) Group(fn func(r *Mux)) { m.Route("", fn) }

// Command routes the application command at path below the prefix
// ("/jobs" under "/herald"; "" for the prefix itself).
func (m *Mux) Command(path string, h Handler) {
	m.add(m.t.commands, "command", path, h)
}

// Autocomplete routes the autocomplete requests of the command at path;
// its handler answers with Choices.
func (m *Mux) Autocomplete(path string, h Handler) {
	m.add(m.t.autocomplete, "autocomplete", path, h)
}

func (m *Mux) add(routes map[string]Handler, kind, path string, h Handler) {
	m.routed = true
	full := m.prefix + cleanPath(path)
	if full == "" {
		m.t.errs = append(m.t.errs, fmt.Errorf("interaction: %s with an empty path", kind))
		return
	}
	if _, dup := routes[full]; dup {
		m.t.errs = append(m.t.errs, fmt.Errorf("interaction: %s %q registered twice", kind, full))
		return
	}
	routes[full] = m.wrap(h)
}

// Component routes buttons and select menus whose custom_id matches
// pattern (see customid.Fill).
func (m *Mux) Component(pattern string, h Handler) {
	m.control(&m.t.components, "component", pattern, h)
}

// Modal routes modal submits whose custom_id matches pattern.
func (m *Mux) Modal(pattern string, h Handler) { m.control(&m.t.modals, "modal", pattern, h) }

func (m *Mux) control(routes *[]controlRoute, kind, raw string, h Handler) {
	m.routed = true
	p, err := customid.ParsePattern(raw)
	if err != nil {
		m.t.errs = append(m.t.errs, fmt.Errorf("interaction: %s: %w", kind, err))
		return
	}
	for _, r := range *routes {
		if r.p.Shape() == p.Shape() {
			m.t.errs = append(m.t.errs, fmt.Errorf("interaction: %s %q registered twice (as %q)", kind, raw, r.p.String()))
			return
		}
	}
	*routes = append(*routes, controlRoute{p: p, h: m.wrap(h)})
}

func (m *Mux) wrap(h Handler) Handler {
	for i := len(m.mws) - 1; i >= 0; i-- {
		h = m.mws[i](h)
	}
	return h
}

func cleanPath(p string) string {
	p = strings.Trim(p, "/ ")
	if p == "" {
		return ""
	}
	return "/" + p
}

// Declared is what Discord is told about, as paths ("/herald/jobs"):
// the commands, and those of them with an option Discord autocompletes.
type Declared struct {
	Commands     []string
	Autocomplete []string
}

// Check reports every registration mistake, and every mismatch between
// the declared paths and the routed ones: a declared command or
// autocomplete option without a handler would answer "outdated" or
// offer nothing, a handler without a declaration could never be reached.
func (m *Mux) Check(d Declared) error {
	errs := slices.Clone(m.t.errs)
	errs = append(errs, matchRoutes("command", d.Commands, m.t.commands)...)
	errs = append(errs, matchRoutes("autocomplete", d.Autocomplete, m.t.autocomplete)...)
	return errors.Join(errs...)
}

// matchRoutes reports the declared paths without a route and the routes
// without a declaration.
func matchRoutes(kind string, declared []string, routes map[string]Handler) []error {
	var errs []error
	want := map[string]bool{}
	for _, p := range declared {
		want[p] = true
		if routes[p] == nil {
			errs = append(errs, fmt.Errorf("interaction: %s %q is declared but has no handler", kind, p))
		}
	}
	for _, p := range slices.Sorted(maps.Keys(routes)) {
		if !want[p] {
			errs = append(errs, fmt.Errorf("interaction: %s %q has a handler but no declaration", kind, p))
		}
	}
	return errs
}

// Match finds the handler of in's interaction (with its routes'
// middleware) and fills in's routing fields, as the fast path does before
// it runs the handler; ok is false for an unknown command, an unparsable
// custom_id or a retired version.
func (m *Mux) Match(in *Interaction) (h Handler, ok bool) {
	i := in.Interaction
	switch i.Type {
	case discordgo.InteractionApplicationCommand, discordgo.InteractionApplicationCommandAutocomplete:
		in.Path = CommandPath(i.ApplicationCommandData())
		in.RouteVersion = 1
		routes := m.t.commands
		if i.Type == discordgo.InteractionApplicationCommandAutocomplete {
			routes = m.t.autocomplete
		}
		h, ok := routes[in.Path]
		return h, ok
	case discordgo.InteractionMessageComponent, discordgo.InteractionModalSubmit:
		routes, raw := m.t.components, ""
		if i.Type == discordgo.InteractionMessageComponent {
			raw = i.MessageComponentData().CustomID
		} else {
			routes, raw = m.t.modals, i.ModalSubmitData().CustomID
		}
		id, err := customid.Parse(raw)
		if err != nil {
			return nil, false
		}
		var best *controlRoute
		bestLiterals := -1
		for k := range routes {
			if vars, literals, ok := routes[k].p.Match(id); ok && literals > bestLiterals {
				best, bestLiterals, in.Vars = &routes[k], literals, vars
			}
		}
		if best == nil {
			return nil, false
		}
		in.CustomID, in.Path, in.RouteVersion = id, best.p.String(), id.Version
		return best.h, true
	}
	return nil, false
}

// CommandPath is a command interaction's route: its name, then its
// subcommand group and subcommand when it has them ("/rolemenu/option/add").
func CommandPath(d discordgo.ApplicationCommandInteractionData) string {
	p := "/" + d.Name
	opts := d.Options
	for len(opts) == 1 && (opts[0].Type == discordgo.ApplicationCommandOptionSubCommandGroup ||
		opts[0].Type == discordgo.ApplicationCommandOptionSubCommand) {
		p += "/" + opts[0].Name
		opts = opts[0].Options
	}
	return p
}
