package tickets

import (
	"context"
	"errors"
	"strings"

	"github.com/bwmarrin/discordgo"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/herald-bot/herald/internal/followup"
	"github.com/herald-bot/herald/internal/interaction"
	"github.com/herald-bot/herald/internal/work"
)

// transcript is /ticket transcript [number]: staff get the transcript of
// the ticket they are in, or of any ticket of the guild by number — the
// stored one of a closed ticket, a fresh one of an open ticket.
func (d *deps) transcript(ctx context.Context, in *interaction.Interaction) (*discordgo.InteractionResponse, error) {
	s, err := loadSettings(ctx, in.DB(), in.GuildID)
	if errors.Is(err, errNoSettings) {
		return say(in, "not_ready", nil), nil
	}
	if err != nil {
		return nil, err
	}
	if !isStaff(in, s) {
		return say(in, "staff_only", map[string]any{"Role": roleMention(s.SupportRole)}), nil
	}
	var t *ticket
	if n, ok := in.Options().Int("number"); ok {
		t, err = readTicket(ctx, in.DB(), `guild_id = $1 AND number = $2`, in.GuildID, n)
	} else {
		t, err = readTicket(ctx, in.DB(), `guild_id = $1 AND channel_id = $2`, in.GuildID, in.ChannelID)
	}
	if errors.Is(err, errNoTicket) {
		return say(in, "not_in_ticket", nil), nil
	}
	if err != nil {
		return nil, err
	}
	if t.Status == StatusOpening || t.Status == StatusFailed {
		return say(in, "no_transcript", map[string]any{"Number": t.Number}), nil
	}
	return followup.Defer(ctx, in, work.Events, transcriptArgs{TicketID: t.ID, Reply: followup.ReplyTo(in)})
}

// transcriptArgs answers /ticket transcript; for an open ticket it also
// stores and uploads a fresh transcript, which is why it is an event.
type transcriptArgs struct {
	TicketID int64 `json:"ticket_id"`
	followup.Reply
}

func (transcriptArgs) Kind() string { return "tickets_transcript" }

type transcriptWorker struct {
	river.WorkerDefaults[transcriptArgs]
	*deps
}

func (w *transcriptWorker) Work(ctx context.Context, j *river.Job[transcriptArgs]) error {
	a := j.Args
	t, err := loadTicket(ctx, w.db, a.TicketID)
	if err != nil {
		return err
	}
	if t.Status == StatusOpen {
		if err := w.refresh(ctx, t); err != nil {
			return err
		}
	}
	loc := a.In(w.catalog)
	text := loc.T("tickets.no_transcript", map[string]any{"Number": t.Number})
	if tr, err := loadTranscript(ctx, w.db, t.ID); err == nil {
		text = w.summary(loc, t, tr)
		if tr.LogURL != "" {
			text += "\n" + tr.LogURL
		} else {
			// No log channel to upload to: the reply carries what fits.
			text += "\n```\n" + truncate(strings.ReplaceAll(tr.Plain, "```", "'''"), 1700) + "\n```"
		}
	} else if !errors.Is(err, errNoTranscript) {
		return err
	}
	return a.Answer(ctx, w.followups, work.Events, j.ID, text)
}

// refresh stores and uploads a fresh transcript of an open ticket.
func (w *transcriptWorker) refresh(ctx context.Context, t *ticket) error {
	s, err := loadSettings(ctx, w.db, t.GuildID)
	if err != nil {
		return err
	}
	for _, step := range []func(context.Context) (func(pgx.Tx) error, error){
		func(ctx context.Context) (func(pgx.Tx) error, error) { return w.buildTranscript(ctx, t) },
		func(ctx context.Context) (func(pgx.Tx) error, error) { return w.upload(ctx, s, t) },
	} {
		record, err := step(ctx)
		if err != nil {
			return err
		}
		if record != nil {
			if err := pgx.BeginFunc(ctx, w.db, record); err != nil {
				return err
			}
		}
	}
	return nil
}
