package followup

import (
	"context"

	"github.com/bwmarrin/discordgo"
	"github.com/riverqueue/river"

	"github.com/herald-bot/herald/internal/i18n"
	"github.com/herald-bot/herald/internal/interaction"
	"github.com/herald-bot/herald/internal/work"
)

// Reply is what a job needs to answer, after the ack, the interaction that
// enqueued it, in the caller's language. Job args embed it; its fields
// keep the names jobs already queued carry.
type Reply struct {
	InteractionID string `json:"interaction_id"`
	Locale        string `json:"locale"`
	GuildLocale   string `json:"guild_locale"`
}

// ReplyTo is the Reply of in.
func ReplyTo(in *interaction.Interaction) Reply {
	user, guild := in.Locales()
	return Reply{InteractionID: in.ID, Locale: user, GuildLocale: guild}
}

// In is the reply's language.
func (r Reply) In(c *i18n.Catalog) *i18n.Localizer { return c.For(r.Locale, r.GuildLocale) }

// Answer sends content as the only update of job jobID.
func (r Reply) Answer(ctx context.Context, s *Sender, lane work.Lane, jobID int64, content string) error {
	_, err := s.Send(ctx, Update{Lane: lane, InteractionID: r.InteractionID, Key: JobKey(jobID), Content: content})
	return err
}

// Defer is the fast path of a command whose job does the work and then
// answers (its args embed ReplyTo(in)): it enqueues args on lane, as an
// event, and answers "thinking", visible to the caller only.
func Defer(ctx context.Context, in *interaction.Interaction, lane work.Lane, args river.JobArgs) (*discordgo.InteractionResponse, error) {
	return deferred(ctx, in, work.IntentEvent, lane, args)
}

func deferred(ctx context.Context, in *interaction.Interaction, intent work.Intent, lane work.Lane, args river.JobArgs) (*discordgo.InteractionResponse, error) {
	err := in.Enqueue(ctx, intent, river.InsertManyParams{Args: args, InsertOpts: &river.InsertOpts{Queue: string(lane)}})
	if err != nil {
		return nil, err
	}
	return interaction.Deferred(true), nil
}
