package bulk_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/bulk"
	"github.com/herald-bot/herald/internal/discord/rest"
	"github.com/herald-bot/herald/internal/feature"
	"github.com/herald-bot/herald/internal/heraldtest"
	"github.com/herald-bot/herald/internal/i18n"
	"github.com/herald-bot/herald/internal/interaction"
	"github.com/herald-bot/herald/internal/testsupport/examplet"
	"github.com/herald-bot/herald/internal/testsupport/pgtest"
	"github.com/herald-bot/herald/internal/work"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// announce is a feature with one bulk kind: /announce text:<…> posts the
// text in every text channel of the server, one task per channel, with
// the progress message and Cancel button every bulk action has.
func announce() feature.Feature {
	return feature.Feature{
		Name: "announce",
		Commands: func(*i18n.Catalog) []*discordgo.ApplicationCommand {
			return []*discordgo.ApplicationCommand{{Name: "announce", Description: "Post in every text channel", Options: []*discordgo.ApplicationCommandOption{
				{Type: discordgo.ApplicationCommandOptionString, Name: "text", Description: "what to post", Required: true, MaxLength: 200},
			}}}
		},
		Build: func(k feature.Kit) error {
			k.Bulk.Kind(bulk.Kind{Name: "announce", Lane: work.Events, Permission: discordgo.PermissionManageMessages,
				// Plan runs once, when the runner starts: the channels as
				// they are then.
				Plan: func(ctx context.Context, a bulk.Action) ([]bulk.Task, error) {
					channels, err := k.Discord.GuildChannels(ctx, a.GuildID)
					if err != nil {
						return nil, err
					}
					var tasks []bulk.Task
					for _, c := range channels {
						if c.Type == discordgo.ChannelTypeGuildText {
							tasks = append(tasks, bulk.Task{Key: c.ID, Name: "<#" + c.ID + ">"})
						}
					}
					return tasks, nil
				},
				// Do runs once per task, and again if it failed: the nonce
				// makes Discord keep one message per channel and action.
				Do: func(ctx context.Context, a bulk.Action, t bulk.Task) error {
					text := strings.Trim(string(a.Params), `"`)
					_, err := k.Discord.CreateMessage(ctx, t.Key, rest.NewMessage{Content: text, Nonce: fmt.Sprintf("announce-%d-%s", a.ID, t.Key)})
					return err
				},
			})
			k.Routes.Group(func(r *interaction.Mux) {
				r.Use(interaction.GuildOnly, interaction.RequirePermission(discordgo.PermissionManageMessages))
				r.Command("/announce", func(ctx context.Context, in *interaction.Interaction) (*discordgo.InteractionResponse, error) {
					// The title is a locale key in a real feature
					// ("announce.title"); one the catalog lacks is shown
					// as written.
					return k.Bulk.Start(ctx, in, "announce", "Announcement", nil, in.Options().String("text"))
				})
			})
			return nil
		},
	}
}

// A bulk kind from a feature's Build to the end of an action: the
// admin's command is answered at once, and the progress message in the
// channel ends with what was done.
func ExampleActions_Kind() {
	examplet.Run("announce", func(t testing.TB) {
		h := heraldtest.New(t, heraldtest.WithFeatures(announce()))
		sent := h.As("alice").Command("general", "/announce", heraldtest.Opts{"text": "Maintenance at 22:00 UTC"})
		fmt.Println(sent.Reply().Content)

		var progress string
		h.Eventually("the action's end", func() bool {
			for _, m := range h.Messages(h.Channel("general")) {
				if strings.Contains(m.Content, "Finished:") {
					progress = m.Content
				}
			}
			return progress != ""
		})
		fmt.Println(progress[strings.Index(progress, "**Finished"):])
		for _, ch := range []string{"general", "roles", "support-info"} {
			n := 0
			for _, m := range h.Messages(h.Channel(ch)) {
				if m.Content == "Maintenance at 22:00 UTC" {
					n++
				}
			}
			fmt.Printf("#%s: %d\n", ch, n)
		}
	})
	// Output:
	// Started: Announcement. Progress is shown in a message in this channel, with a Cancel button.
	// **Finished: 3 of 3 done.**
	// #general: 1
	// #roles: 1
	// #support-info: 1
}
