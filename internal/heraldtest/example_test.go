package heraldtest_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"
	"github.com/riverqueue/river"

	"github.com/herald-bot/herald/internal/config"
	"github.com/herald-bot/herald/internal/discord/rest"
	"github.com/herald-bot/herald/internal/feature"
	"github.com/herald-bot/herald/internal/heraldtest"
	"github.com/herald-bot/herald/internal/i18n"
	"github.com/herald-bot/herald/internal/interaction"
	"github.com/herald-bot/herald/internal/interaction/customid"
	"github.com/herald-bot/herald/internal/outbox"
	"github.com/herald-bot/herald/internal/testsupport/examplet"
	"github.com/herald-bot/herald/internal/testsupport/pgtest"
	"github.com/herald-bot/herald/internal/work"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// This file is the feature kit's executable documentation: a whole
// feature, "greet", and an Example that drives it as members do in
// Discord (go doc heraldtest shows it).
// A real feature is the same in a package of its own, with its command
// declared and localized in commands/ and its strings in locales/, and
// one line in app.Features.
//
//   - /greet who:<member> — the fast path checks the option, enqueues a
//     job in its transaction and answers "thinking…" for the caller only;
//   - the job posts the greeting with a "Wave back" button through the
//     REST client, then fills the deferred answer;
//   - the button's custom_id carries who greeted, so it keeps working
//     after a restart: herald keeps no state per button.

// waveID is the button's custom-ID pattern: it routes the clicks and
// builds the ids (customid.Fill).
const waveID = "greet:1:wave:{from}"

// greeting is the feature's setting: herald checks it with its own
// configuration, and `herald --help` lists it.
var greeting = config.Var[string]{
	Setting: config.Setting{Key: "HERALD_GREET_WORD", Default: "Hello", Help: "the word /greet greets with"},
	Parse: func(v string) (string, error) {
		if len(v) > 20 {
			return "", fmt.Errorf("must be at most 20 characters, got %d", len(v))
		}
		return v, nil
	},
}

func greet() feature.Feature {
	return feature.Feature{
		Name: "greet",
		Commands: func(*i18n.Catalog) []*discordgo.ApplicationCommand {
			return []*discordgo.ApplicationCommand{{Name: "greet", Description: "Greet a member", Options: []*discordgo.ApplicationCommandOption{
				{Type: discordgo.ApplicationCommandOptionUser, Name: "who", Description: "whom to greet", Required: true},
			}}}
		},
		Settings: []config.Declared{greeting},
		Build: func(k feature.Kit) error {
			word := greeting.Get(k.Config)
			k.Routes.Group(func(r *interaction.Mux) {
				r.Use(interaction.GuildOnly)
				r.Command("/greet", func(ctx context.Context, in *interaction.Interaction) (*discordgo.InteractionResponse, error) {
					who := in.Options().String("who")
					if who == in.UserID() {
						return interaction.Ephemeral("Greeting yourself? Pick someone else."), nil
					}
					err := in.Enqueue(ctx, outbox.IntentEvent, river.InsertManyParams{
						Args:       greetArgs{ChannelID: in.ChannelID, From: in.UserID(), To: who, Token: in.Token},
						InsertOpts: &river.InsertOpts{Queue: string(work.Interactive)},
					})
					return interaction.Deferred(true), err
				})
				r.Component(waveID, func(ctx context.Context, in *interaction.Interaction) (*discordgo.InteractionResponse, error) {
					err := in.Enqueue(ctx, outbox.IntentEvent, river.InsertManyParams{
						Args:       waveArgs{ChannelID: in.ChannelID, From: in.UserID(), To: in.Vars["from"]},
						InsertOpts: &river.InsertOpts{Queue: string(work.Interactive)},
					})
					return interaction.DeferredUpdate(), err
				})
			})
			work.Register(k.Jobs, &greetWorker{discord: k.Discord, word: word})
			work.Register(k.Jobs, &waveWorker{discord: k.Discord})
			return nil
		},
	}
}

type greetArgs struct{ ChannelID, From, To, Token string }

func (greetArgs) Kind() string { return "greet_post" }

type greetWorker struct {
	river.WorkerDefaults[greetArgs]
	discord *rest.Client
	word    string
}

// Work posts the greeting once however often it runs: the nonce is the
// job's, and Discord keeps one message per nonce.
func (w *greetWorker) Work(ctx context.Context, j *river.Job[greetArgs]) error {
	wave, err := customid.Fill(waveID, j.Args.From)
	if err != nil {
		return river.JobCancel(err)
	}
	_, err = w.discord.CreateMessage(ctx, j.Args.ChannelID, rest.NewMessage{
		Content: fmt.Sprintf("%s <@%s>, <@%s> says hi!", w.word, j.Args.To, j.Args.From),
		Components: []discordgo.MessageComponent{discordgo.ActionsRow{Components: []discordgo.MessageComponent{
			discordgo.Button{Label: "Wave back", Style: discordgo.PrimaryButton, CustomID: wave},
		}}},
		AllowedMentions: &discordgo.MessageAllowedMentions{Users: []string{j.Args.To}},
		Nonce:           fmt.Sprintf("greet-%d", j.ID),
	})
	if err != nil {
		return err
	}
	done := "Sent."
	_, err = w.discord.EditOriginal(ctx, j.Args.Token, rest.MessageEdit{Content: &done})
	return err
}

type waveArgs struct{ ChannelID, From, To string }

func (waveArgs) Kind() string { return "greet_wave" }

type waveWorker struct {
	river.WorkerDefaults[waveArgs]
	discord *rest.Client
}

func (w *waveWorker) Work(ctx context.Context, j *river.Job[waveArgs]) error {
	_, err := w.discord.CreateMessage(ctx, j.Args.ChannelID, rest.NewMessage{
		Content: fmt.Sprintf("<@%s> waves back at <@%s>", j.Args.From, j.Args.To), Nonce: fmt.Sprintf("wave-%d", j.ID)})
	return err
}

// The feature end to end, as members use it: a command in the simulator,
// the fast answer, the job's message with its button, a click on the
// button by another member, and the job that answers it. An Example runs
// without a *testing.T: examplet.Run hands the harness a testing.TB and
// prints any failure, which breaks the expected output.
func Example() {
	examplet.Run("greet", func(t testing.TB) {
		h := heraldtest.New(t, heraldtest.WithFeatures(greet()), heraldtest.WithEnv(map[string]string{"HERALD_GREET_WORD": "Ahoy"}))
		bob, carol := h.As("bob"), h.As("carol")

		sent := bob.Command("general", "/greet", heraldtest.Opts{"who": h.Member("carol")})
		fmt.Println("bob's /greet is answered at once:", discordgo.InteractionResponseType(sent.Ack().AckType) == discordgo.InteractionResponseDeferredChannelMessageWithSource)
		reply := sent.Reply()
		fmt.Printf("then the job edits the answer: %q, only bob sees it: %v\n", reply.Content, reply.Flags&discordgo.MessageFlagsEphemeral != 0)

		var greeting *discordgo.Message
		h.Eventually("the greeting", func() bool {
			for _, m := range h.Messages(h.Channel("general")) {
				if strings.HasPrefix(m.Content, "Ahoy <@"+h.Member("carol")+">") {
					greeting = m
				}
			}
			return greeting != nil
		})
		fmt.Println("#general gets the greeting with a button:", heraldtest.Button(t, greeting, "Wave back") != "")

		ack := carol.Click(greeting, heraldtest.Button(t, greeting, "Wave back")).Ack()
		fmt.Println("carol's click is answered at once:", discordgo.InteractionResponseType(ack.AckType) == discordgo.InteractionResponseDeferredMessageUpdate)
		want := fmt.Sprintf("<@%s> waves back at <@%s>", h.Member("carol"), h.Member("bob"))
		h.Eventually("the wave", func() bool {
			msgs := h.Messages(h.Channel("general"))
			return msgs[len(msgs)-1].Content == want
		})
		fmt.Println("and the wave follows in #general")

		// Greeting yourself is refused on the fast path: nothing is enqueued.
		fmt.Println(bob.Command("general", "/greet", heraldtest.Opts{"who": h.Member("bob")}).Reply().Content)
		var jobs int
		if err := h.DB.QueryRow(t.Context(), `SELECT count(*) FROM river_job WHERE kind = 'greet_post'`).Scan(&jobs); err != nil {
			t.Fatal(err)
		}
		fmt.Println("greet jobs:", jobs)
	})
	// Output:
	// bob's /greet is answered at once: true
	// then the job edits the answer: "Sent.", only bob sees it: true
	// #general gets the greeting with a button: true
	// carol's click is answered at once: true
	// and the wave follows in #general
	// Greeting yourself? Pick someone else.
	// greet jobs: 1
}
