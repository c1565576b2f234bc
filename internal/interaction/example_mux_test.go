package interaction_test

import (
	"context"
	"fmt"

	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/interaction"
)

// A feature routes its commands by path and its components by custom-ID
// pattern; Route nests paths, Group and Route scope middleware, and Check
// holds the routes against what Discord is told. The fast path calls
// Match and the handler for each interaction, as this example does.
func ExampleMux() {
	m := interaction.NewMux()
	say := func(text string) interaction.Handler {
		return func(context.Context, *interaction.Interaction) (*discordgo.InteractionResponse, error) {
			return interaction.Ephemeral(text), nil
		}
	}
	// traced is a middleware: it sees every interaction of the routes
	// registered after it in its group.
	traced := func(next interaction.Handler) interaction.Handler {
		return func(ctx context.Context, in *interaction.Interaction) (*discordgo.InteractionResponse, error) {
			fmt.Println("->", in.Path)
			return next(ctx, in)
		}
	}
	m.Route("/rolemenu", func(r *interaction.Mux) {
		r.Use(traced)
		r.Command("/create", say("menu created"))
		r.Route("/option", func(r *interaction.Mux) {
			r.Command("/add", say("option added"))
		})
	})
	m.Group(func(r *interaction.Mux) {
		r.Component("rolemenu:1:pick:{menu}:{option}", func(_ context.Context, in *interaction.Interaction) (*discordgo.InteractionResponse, error) {
			return interaction.Ephemeral("menu " + in.Vars["menu"] + ", option " + in.Vars["option"]), nil
		})
	})
	if err := m.Check(interaction.Declared{Commands: []string{"/rolemenu/create", "/rolemenu/option/add"}}); err != nil {
		fmt.Println(err)
	}

	sub := func(typ discordgo.ApplicationCommandOptionType, name string, opts ...*discordgo.ApplicationCommandInteractionDataOption) []*discordgo.ApplicationCommandInteractionDataOption {
		return []*discordgo.ApplicationCommandInteractionDataOption{{Type: typ, Name: name, Options: opts}}
	}
	addOption := &discordgo.Interaction{Type: discordgo.InteractionApplicationCommand, Data: discordgo.ApplicationCommandInteractionData{
		Name: "rolemenu", Options: sub(discordgo.ApplicationCommandOptionSubCommandGroup, "option", sub(discordgo.ApplicationCommandOptionSubCommand, "add")...)}}
	click := func(customID string) *discordgo.Interaction {
		return &discordgo.Interaction{Type: discordgo.InteractionMessageComponent, Data: discordgo.MessageComponentInteractionData{CustomID: customID}}
	}
	for _, i := range []*discordgo.Interaction{addOption, click("rolemenu:1:pick:12:3"), click("rolemenu:0:pick:12:3")} {
		in := &interaction.Interaction{Interaction: i}
		h, ok := m.Match(in)
		if !ok {
			fmt.Println("no route: the member is told the message is outdated")
			continue
		}
		r, _ := h(context.Background(), in)
		fmt.Println(r.Data.Content)
	}
	// Output:
	// -> /rolemenu/option/add
	// option added
	// menu 12, option 3
	// no route: the member is told the message is outdated
}
