package followup

import (
	"context"

	"github.com/bwmarrin/discordgo"
	"github.com/riverqueue/river"

	"github.com/herald-bot/herald/internal/i18n"
	"github.com/herald-bot/herald/internal/interaction"
	"github.com/herald-bot/herald/internal/outbox"
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
	return deferred(ctx, in, outbox.IntentEvent, lane, args)
}

func deferred(ctx context.Context, in *interaction.Interaction, intent outbox.Intent, lane work.Lane, args river.JobArgs) (*discordgo.InteractionResponse, error) {
	err := in.Enqueue(ctx, intent, river.InsertManyParams{Args: args, InsertOpts: &river.InsertOpts{Queue: string(lane)}})
	if err != nil {
		return nil, err
	}
	return interaction.Deferred(true), nil
}

// A view answers a command with text read when its job runs — a report —
// in the caller's language: the command's fast path answers "thinking"
// (Later), the job renders the text and fills the reply. A feature names
// each of its views by a kind and registers how to render it:
//
//	type statusView struct{}
//
//	func (statusView) Kind() string { return "rolemenu_status" }
//
//	followup.RegisterView[statusView](k.Jobs, k.Followups, k.Catalog, d.statusText)
//	m.Command("rolemenu status", followup.Later[statusView])
type Kind interface{ Kind() string }

// ViewArgs are the args of K's view jobs: useless once the interaction's
// token has expired.
type ViewArgs[K Kind] struct {
	work.View
	Reply
	GuildID string `json:"guild_id"`
}

// Kind implements river.JobArgs.
func (ViewArgs[K]) Kind() string {
	var k K
	return k.Kind()
}

// Render writes a view's text for a guild in a language.
type Render func(ctx context.Context, guildID string, loc *i18n.Localizer) (string, error)

// Later is the fast path of a command answered by K's view: it enqueues
// the view job on the interactive lane and answers "thinking", visible to
// the caller only.
func Later[K Kind](ctx context.Context, in *interaction.Interaction) (*discordgo.InteractionResponse, error) {
	args := ViewArgs[K]{View: work.ReplyView(in.Received), Reply: ReplyTo(in), GuildID: in.GuildID}
	return deferred(ctx, in, outbox.IntentView, work.Interactive, args)
}

// RegisterView registers the job that renders K's view and answers with it.
func RegisterView[K Kind](jobs *work.Registry, s *Sender, c *i18n.Catalog, render Render) {
	work.Register(jobs, &viewWorker[K]{sender: s, catalog: c, render: render})
}

type viewWorker[K Kind] struct {
	river.WorkerDefaults[ViewArgs[K]]
	sender  *Sender
	catalog *i18n.Catalog
	render  Render
}

func (w *viewWorker[K]) Work(ctx context.Context, j *river.Job[ViewArgs[K]]) error {
	text, err := w.render(ctx, j.Args.GuildID, j.Args.In(w.catalog))
	if err != nil {
		return err
	}
	return j.Args.Answer(ctx, w.sender, work.Interactive, j.ID, text)
}
