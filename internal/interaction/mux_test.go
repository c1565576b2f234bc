package interaction_test

import (
	"context"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/interaction"
)

// respond returns a handler that answers with content, to tell routes apart.
func respond(content string) interaction.Handler {
	return func(context.Context, *interaction.Interaction) (*discordgo.InteractionResponse, error) {
		return interaction.Ephemeral(content), nil
	}
}

func command(name string, opts ...*discordgo.ApplicationCommandInteractionDataOption) *discordgo.Interaction {
	return &discordgo.Interaction{Type: discordgo.InteractionApplicationCommand,
		Data: discordgo.ApplicationCommandInteractionData{Name: name, Options: opts}}
}

func sub(typ discordgo.ApplicationCommandOptionType, name string, opts ...*discordgo.ApplicationCommandInteractionDataOption) *discordgo.ApplicationCommandInteractionDataOption {
	return &discordgo.ApplicationCommandInteractionDataOption{Type: typ, Name: name, Options: opts}
}

func component(customID string) *discordgo.Interaction {
	return &discordgo.Interaction{Type: discordgo.InteractionMessageComponent,
		Data: discordgo.MessageComponentInteractionData{CustomID: customID}}
}

// answer routes i through m and returns the content the handler answered
// with ("" when nothing matched) and the routing fields.
func answer(t *testing.T, m *interaction.Mux, i *discordgo.Interaction) (string, *interaction.Interaction) {
	t.Helper()
	in := &interaction.Interaction{Interaction: i}
	h, ok := m.Match(in)
	if !ok {
		return "", in
	}
	r, err := h(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	return r.Data.Content, in
}

func TestCommandsRouteByPath(t *testing.T) {
	t.Parallel()
	m := interaction.NewMux()
	m.Route("/rolemenu", func(r *interaction.Mux) {
		r.Command("/create", respond("create"))
		r.Route("/option", func(r *interaction.Mux) {
			r.Command("/add", respond("option add"))
		})
		r.Autocomplete("/option/add", respond("suggest"))
	})
	m.Command("/ping", respond("pong"))
	if err := m.Check(interaction.Declared{Commands: []string{"/rolemenu/create", "/rolemenu/option/add", "/ping"}, Autocomplete: []string{"/rolemenu/option/add"}}); err != nil {
		t.Fatal(err)
	}
	str := discordgo.ApplicationCommandOptionString
	for _, tc := range []struct {
		i    *discordgo.Interaction
		want string
		path string
	}{
		{command("rolemenu", sub(discordgo.ApplicationCommandOptionSubCommand, "create", sub(str, "name"))), "create", "/rolemenu/create"},
		{command("rolemenu", sub(discordgo.ApplicationCommandOptionSubCommandGroup, "option",
			sub(discordgo.ApplicationCommandOptionSubCommand, "add", sub(str, "menu")))), "option add", "/rolemenu/option/add"},
		{command("ping"), "pong", "/ping"},
		{command("rolemenu", sub(discordgo.ApplicationCommandOptionSubCommand, "delete")), "", "/rolemenu/delete"},
		{command("gone"), "", "/gone"},
	} {
		got, in := answer(t, m, tc.i)
		if got != tc.want || in.Path != tc.path || (got != "" && in.RouteVersion != 1) {
			t.Errorf("%s: answered %q (path %q, version %d), want %q", tc.path, got, in.Path, in.RouteVersion, tc.want)
		}
	}
	auto := command("rolemenu", sub(discordgo.ApplicationCommandOptionSubCommandGroup, "option",
		sub(discordgo.ApplicationCommandOptionSubCommand, "add", &discordgo.ApplicationCommandInteractionDataOption{Name: "menu", Type: str, Focused: true, Value: "we"})))
	auto.Type = discordgo.InteractionApplicationCommandAutocomplete
	if got, _ := answer(t, m, auto); got != "suggest" {
		t.Errorf("autocomplete answered %q", got)
	}
}

// Components route by custom-ID pattern; variables are bound, the most
// specific pattern wins, and another version or feature is no match.
func TestComponentsRouteByPattern(t *testing.T) {
	t.Parallel()
	m := interaction.NewMux()
	m.Component("rolemenu:2:pick:{menu}:{option}", respond("pick"))
	m.Component("rolemenu:2:pick:{menu}:none", respond("none"))
	m.Component("tickets:1:open", respond("open"))
	if err := m.Check(interaction.Declared{}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		id, want string
		vars     map[string]string
	}{
		{"rolemenu:2:pick:12:3", "pick", map[string]string{"menu": "12", "option": "3"}},
		{"rolemenu:2:pick:12:none", "none", map[string]string{"menu": "12"}},
		{"tickets:1:open", "open", nil},
		{"rolemenu:1:pick:12:3", "", nil}, // a retired version
		{"rolemenu:2:pick:12", "", nil},
		{"rolemenu:2:pick::3", "", nil},
		{"tickets:1:open:extra", "", nil},
		{"not an id", "", nil},
	} {
		got, in := answer(t, m, component(tc.id))
		if got != tc.want || len(in.Vars) != len(tc.vars) {
			t.Errorf("%q: answered %q with vars %v, want %q with %v", tc.id, got, in.Vars, tc.want, tc.vars)
			continue
		}
		for k, v := range tc.vars {
			if in.Vars[k] != v {
				t.Errorf("%q: var %s = %q, want %q", tc.id, k, in.Vars[k], v)
			}
		}
		if got != "" && (in.RouteVersion != in.CustomID.Version || in.CustomID.String() != tc.id) {
			t.Errorf("%q: routed as %+v", tc.id, in)
		}
	}
}

// Group middleware wraps the routes registered after it, outermost first,
// and stays inside its group.
func TestMiddlewareScope(t *testing.T) {
	t.Parallel()
	var order []string
	mark := func(name string) interaction.Middleware {
		return func(next interaction.Handler) interaction.Handler {
			return func(ctx context.Context, in *interaction.Interaction) (*discordgo.InteractionResponse, error) {
				order = append(order, name)
				return next(ctx, in)
			}
		}
	}
	m := interaction.NewMux()
	m.Use(mark("outer"))
	m.Route("/admin", func(r *interaction.Mux) {
		r.Use(mark("inner"))
		r.Command("/do", respond("do"))
	})
	m.Command("/open", respond("open"))
	answer(t, m, command("admin", sub(discordgo.ApplicationCommandOptionSubCommand, "do")))
	answer(t, m, command("open"))
	if got := strings.Join(order, ","); got != "outer,inner,outer" {
		t.Errorf("middleware ran %s, want outer,inner then outer alone", got)
	}
}

// Registration mistakes and mismatches with the declared commands are all
// reported at start-up.
func TestCheckReportsEveryMistake(t *testing.T) {
	t.Parallel()
	m := interaction.NewMux()
	m.Command("/herald/jobs", respond("a"))
	m.Command("/herald/jobs", respond("b"))
	m.Command("/secret", respond("c"))
	m.Autocomplete("/nowhere", respond("d"))
	m.Component("rolemenu:1:pick:{menu}", respond("e"))
	m.Component("rolemenu:1:pick:{other}", respond("f"))
	m.Component("rolemenu:x:pick", respond("g"))
	m.Modal("tickets:1:form:{a}:{a}", respond("h"))
	m.Use(func(h interaction.Handler) interaction.Handler { return h })
	err := m.Check(interaction.Declared{Commands: []string{"/herald/jobs", "/herald/status"}, Autocomplete: []string{"/herald/jobs"}})
	for _, want := range []string{
		`command "/herald/jobs" registered twice`,
		`command "/herald/status" is declared but has no handler`,
		`command "/secret" has a handler but no declaration`,
		`autocomplete "/nowhere" has a handler but no declaration`,
		`autocomplete "/herald/jobs" is declared but has no handler`,
		`component "rolemenu:1:pick:{other}" registered twice`,
		`pattern "rolemenu:x:pick"`,
		`variable "a" twice`,
		"Use after routes",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Check() = %v\nwant it to report %s", err, want)
		}
	}
}
