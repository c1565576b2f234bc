package tickets

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/bwmarrin/discordgo"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/herald-bot/herald/internal/discord/rest"
	"github.com/herald-bot/herald/internal/i18n"
	"github.com/herald-bot/herald/internal/interaction"
	"github.com/herald-bot/herald/internal/work"
)

// Why a ticket closed, as the close job and its messages name it.
const (
	ruleManual     = "manual"
	ruleInactivity = "inactivity"
	ruleLeft       = "left"
	ruleRequest    = "request"
	ruleDeleted    = "deleted"
)

func (d *deps) closeCommand(ctx context.Context, in *interaction.Interaction) (*discordgo.InteractionResponse, error) {
	return d.inTicket(ctx, in, false, d.closeFn(ctx, in, strings.TrimSpace(in.Options().String("reason"))))
}

func (d *deps) closeButton(ctx context.Context, in *interaction.Interaction) (*discordgo.InteractionResponse, error) {
	return d.byButton(ctx, in, false, d.closeFn(ctx, in, ""))
}

// confirmClose is the opener agreeing to a close request.
func (d *deps) confirmClose(ctx context.Context, in *interaction.Interaction) (*discordgo.InteractionResponse, error) {
	return d.byButton(ctx, in, false, d.closeFn(ctx, in, ""))
}

// closeFn lets the opener or staff close an open ticket: the ticket is
// closing from this transaction on, and its close job does the rest. A
// ticket still being opened is closed by its open job when that is done.
func (d *deps) closeFn(ctx context.Context, in *interaction.Interaction, reason string) ticketAction {
	return func(tx pgx.Tx, t *ticket, s *settings) (*discordgo.InteractionResponse, []river.InsertManyParams, error) {
		if t.OpenerID != in.UserID() && !isStaff(in, s) {
			return say(in, "close_not_allowed", nil), nil, nil
		}
		if t.Status == StatusOpening {
			// Its open job closes it once done (create.go).
			if _, err := tx.Exec(ctx, `UPDATE tickets SET close_when_open = true, closed_by = NULLIF($2, ''), close_reason = $3 WHERE id = $1`,
				t.ID, in.UserID(), reason); err != nil {
				return nil, nil, err
			}
			return say(in, "closing_when_open", map[string]any{"Number": t.Number}), nil, nil
		}
		if t.Status != StatusOpen {
			return notOpen(in, t), nil, nil
		}
		if reason == "" {
			reason = t.CloseReason // a close request's reason
		}
		if _, err := markClosing(ctx, tx, t.ID, in.UserID(), reason); err != nil {
			return nil, nil, err
		}
		if t.ChannelID == nil || *t.ChannelID != in.ChannelID {
			return say(in, "closing", map[string]any{"Number": t.Number}), one(closeJob(closeArgs{TicketID: t.ID, Rule: ruleManual})), nil
		}
		// Closed from inside the ticket: the answer is the closing
		// message, for everyone there, so the close job posts none.
		loc := d.catalog.For(t.GuildLocale, t.Locale)
		closing := &discordgo.InteractionResponse{Type: discordgo.InteractionResponseChannelMessageWithSource,
			Data: &discordgo.InteractionResponseData{Content: closingText(loc, "tickets.closing_public", t.Number, in.UserID(), ruleManual, reason),
				AllowedMentions: &discordgo.MessageAllowedMentions{}}}
		return closing, one(closeJob(closeArgs{TicketID: t.ID, Rule: ruleManual, Announced: true})), nil
	}
}

// markClosing marks an open ticket closing in tx, for the caller to
// enqueue its close job in the same transaction. A ticket no longer open
// reports false and is left alone, so two closes make one job.
func markClosing(ctx context.Context, tx pgx.Tx, ticketID int64, by, reason string) (bool, error) {
	tag, err := tx.Exec(ctx, `UPDATE tickets SET status = 'closing', closed_by = NULLIF($2, ''), close_reason = $3
		WHERE id = $1 AND status = 'open'`, ticketID, by, reason)
	return err == nil && tag.RowsAffected() == 1, err
}

func closeJob(a closeArgs) river.InsertManyParams {
	return river.InsertManyParams{Args: a, InsertOpts: &river.InsertOpts{Queue: string(work.Events)}}
}

// insertTx inserts a worker's jobs in its transaction tx, with the guild
// in their metadata like the fast path's.
func insertTx(ctx context.Context, tx pgx.Tx, guildID string, jobs ...river.InsertManyParams) error {
	for i := range jobs {
		jobs[i].InsertOpts = work.ForGuild(jobs[i].InsertOpts, guildID)
	}
	_, err := river.ClientFromContext[pgx.Tx](ctx).InsertManyTx(ctx, tx, jobs)
	return err
}

// closeArgs is a ticket's close: an event job of resumable steps.
// Announced says the close's answer in the ticket was its closing message.
type closeArgs struct {
	TicketID  int64  `json:"ticket_id"`
	Rule      string `json:"rule"`
	Announced bool   `json:"announced,omitempty"`
}

func (closeArgs) Kind() string { return "tickets_close" }

type closeWorker struct {
	river.WorkerDefaults[closeArgs]
	*deps
}

// Work runs the close's steps in order (the staff notification, if any,
// loses its Join button before the thread is archived). Each step
// commits its result together with River's checkpoint, so a retry after
// a failure or a restart starts at the first step not done; a step cut
// off between its Discord call and its commit runs again, and the
// message nonces make Discord keep the first post.
func (w *closeWorker) Work(ctx context.Context, j *river.Job[closeArgs]) error {
	t, err := loadTicket(ctx, w.db, j.Args.TicketID)
	if errors.Is(err, errNoTicket) {
		return nil
	}
	// A closed ticket's job died after its last checkpoint, before River
	// recorded it complete: it runs through its steps, which River skips,
	// since River fails a job whose recorded step it does not meet.
	if err != nil || t.Status != StatusClosing && t.Status != StatusClosed {
		return err
	}
	s, err := loadSettings(ctx, w.db, t.GuildID)
	if err != nil {
		return err
	}
	var failed error
	step := func(name string, fn func(ctx context.Context) (func(pgx.Tx) error, error)) {
		river.ResumableStep(ctx, name, nil, func(ctx context.Context) error {
			record, err := fn(ctx)
			if err == nil {
				err = w.checkpoint(ctx, j, record)
			}
			if err != nil && failed == nil {
				failed = err
			}
			return err
		})
	}
	step("message", func(ctx context.Context) (func(pgx.Tx) error, error) {
		if j.Args.Announced {
			return nil, nil
		}
		return nil, w.closingMessage(ctx, t, j.Args.Rule)
	})
	step("transcript", func(ctx context.Context) (func(pgx.Tx) error, error) { return w.buildTranscript(ctx, t) })
	step("upload", func(ctx context.Context) (func(pgx.Tx) error, error) { return w.upload(ctx, s, t) })
	step("dm", func(ctx context.Context) (func(pgx.Tx) error, error) { return nil, w.dm(ctx, s, t) })
	step("notice", func(ctx context.Context) (func(pgx.Tx) error, error) { return nil, w.refreshNotice(ctx, t) })
	step("finish", func(ctx context.Context) (func(pgx.Tx) error, error) { return w.finish(ctx, t, j.Attempt > 1) })
	return failed
}

// checkpoint commits a step's result with River's record that the step
// is done.
func (w *closeWorker) checkpoint(ctx context.Context, j *river.Job[closeArgs], record func(pgx.Tx) error) error {
	tx, err := w.db.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if record != nil {
		if err := record(tx); err != nil {
			return err
		}
	}
	if _, err := river.ResumableSetStepTx[*riverpgxv5.Driver](ctx, tx, j); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// closingMessage tells the ticket it is closing, who closed it and why.
func (w *closeWorker) closingMessage(ctx context.Context, t *ticket, rule string) error {
	if t.ChannelID == nil || rule == ruleDeleted {
		return nil
	}
	by := ""
	if t.ClosedBy != nil {
		by = *t.ClosedBy
	}
	text := closingText(w.catalog.For(t.GuildLocale, t.Locale), "tickets.closing_message", t.Number, by, rule, t.CloseReason)
	_, err := w.discord.CreateMessage(ctx, *t.ChannelID, rest.NewMessage{Content: text,
		AllowedMentions: &discordgo.MessageAllowedMentions{}, Nonce: fmt.Sprintf("tc%d", t.ID)})
	if gone(err) {
		return nil
	}
	return err
}

// closingText is a closing message (key): who closed ticket number (a
// user id, "" for herald itself), by which rule, and the reason given.
func closingText(loc *i18n.Localizer, key string, number int, by, rule, reason string) string {
	who := loc.T("tickets.close_by_herald", nil)
	if by != "" {
		who = userMention(by)
	}
	text := loc.T(key, map[string]any{"Number": number, "By": who, "Why": loc.T("tickets.rule."+rule, nil)})
	if reason != "" {
		text += "\n" + loc.T("tickets.event.reason", map[string]any{"Reason": reason})
	}
	return text
}

// upload posts the transcript to the log channel, once (by nonce), and
// records where it is: its first file.
func (w *deps) upload(ctx context.Context, s *settings, t *ticket) (func(pgx.Tx) error, error) {
	if s.LogChannelID == nil {
		return nil, nil
	}
	tr, err := loadTranscript(ctx, w.db, t.ID)
	if err != nil {
		return nil, err
	}
	msg, err := w.postTranscript(ctx, w.catalog.For(t.GuildLocale, t.Locale), *s.LogChannelID, "tt", t, tr)
	if gone(err) {
		return nil, nil // the log channel was deleted: the transcript stays in Postgres
	}
	if err != nil {
		return nil, err
	}
	url := ""
	if len(msg.Attachments) > 0 {
		url = msg.Attachments[0].URL
	}
	return func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE ticket_transcripts SET log_url = $2 WHERE ticket_id = $1`, t.ID, url)
		return err
	}, nil
}

// dm sends the opener a copy when the guild allows it; an opener who
// refuses DMs (50007) or left gets none.
func (w *closeWorker) dm(ctx context.Context, s *settings, t *ticket) error {
	if !s.DMTranscripts {
		return nil
	}
	tr, err := loadTranscript(ctx, w.db, t.ID)
	if err != nil {
		return err
	}
	dm, err := w.discord.CreateDM(ctx, t.OpenerID)
	if err != nil {
		if code := apiCode(err); code == 50007 || code == 10013 {
			return nil
		}
		return err
	}
	_, err = w.postTranscript(ctx, w.catalog.For(t.Locale, t.GuildLocale), dm.ID, "td", t, tr)
	if code := apiCode(err); code == 50007 || code == 10013 {
		return nil
	}
	return err
}

// finish archives and locks the thread, or deletes the channel, and
// marks the ticket closed. A retry reads the thread first: the archive of
// an attempt cut off before its checkpoint may have landed (a second
// delete of a channel only finds it gone).
func (w *closeWorker) finish(ctx context.Context, t *ticket, retry bool) (func(pgx.Tx) error, error) {
	if t.ChannelID != nil {
		reason := fmt.Sprintf("ticket #%d closed", t.Number)
		var err error
		if t.Mode == ModeThread {
			err = w.archive(ctx, t, retry, reason)
		} else {
			err = w.discord.DeleteChannel(ctx, *t.ChannelID, reason)
		}
		if err != nil && !gone(err) {
			return nil, err
		}
	}
	return func(tx pgx.Tx) error {
		// A deleted channel cannot be reopened: forget it, so its id
		// finds no ticket.
		_, err := tx.Exec(ctx, `UPDATE tickets SET status = 'closed', closed_at = now(),
			channel_id = CASE WHEN mode = 'channel' THEN NULL ELSE channel_id END WHERE id = $1`, t.ID)
		return err
	}, nil
}

// archive archives and locks a ticket's thread, unless a retry finds it
// so already. Discord may have archived it meanwhile, unlocked: it
// locks only an active thread.
func (w *closeWorker) archive(ctx context.Context, t *ticket, retry bool, reason string) error {
	if retry {
		th, err := w.discord.Channel(ctx, *t.ChannelID)
		if err != nil {
			return err
		}
		if th.ThreadMetadata != nil && th.ThreadMetadata.Archived && th.ThreadMetadata.Locked {
			return nil
		}
	}
	return w.onThread(ctx, t, reason, func() error {
		_, err := w.discord.ArchiveThread(ctx, *t.ChannelID, true, reason)
		return err
	})
}
