package tickets

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/herald-bot/herald/internal/discord/rest"
	"github.com/herald-bot/herald/internal/discord/transport"
	"github.com/herald-bot/herald/internal/work"
)

// autoCloseArgs watches one rule of one ticket: inactivity, the opener
// having left, or a close request. The job is scheduled in Postgres, so it
// fires after a restart as it would have before; it warns first, then
// snoozes until the grace period ends and closes the ticket if nothing
// changed. Snoozes cost no attempts.
type autoCloseArgs struct {
	TicketID int64  `json:"ticket_id"`
	Rule     string `json:"rule"`
}

func (autoCloseArgs) Kind() string { return "tickets_autoclose" }

func autoCloseJob(ticketID int64, rule string, at time.Time) river.InsertManyParams {
	return river.InsertManyParams{Args: autoCloseArgs{TicketID: ticketID, Rule: rule},
		InsertOpts: &river.InsertOpts{Queue: string(work.Events), ScheduledAt: at}}
}

type autoCloseWorker struct {
	river.WorkerDefaults[autoCloseArgs]
	*deps
}

func (w *autoCloseWorker) Work(ctx context.Context, j *river.Job[autoCloseArgs]) error {
	t, err := loadTicket(ctx, w.db, j.Args.TicketID)
	if errors.Is(err, errNoTicket) {
		return nil
	}
	if err != nil || t.Status != StatusOpen || t.ChannelID == nil {
		return err
	}
	switch j.Args.Rule {
	case ruleRequest:
		return w.request(ctx, t)
	case ruleLeft:
		return w.left(ctx, t)
	case ruleInactivity:
		return w.inactive(ctx, t)
	}
	return river.JobCancel(fmt.Errorf("%s: unknown rule %q", work.ReasonInvalid, j.Args.Rule))
}

// request closes a ticket whose close request went unanswered.
func (w *autoCloseWorker) request(ctx context.Context, t *ticket) error {
	var asked *time.Time
	if err := w.db.QueryRow(ctx, `SELECT close_requested_at FROM tickets WHERE id = $1`, t.ID).Scan(&asked); err != nil {
		return err
	}
	if asked == nil {
		return nil // reopened or closed since
	}
	if wait := time.Until(asked.Add(w.grace)); wait > 0 {
		return river.JobSnooze(wait)
	}
	return w.close(ctx, t, ruleRequest)
}

// left warns that the opener left and closes the ticket after the grace
// period, unless they came back.
func (w *autoCloseWorker) left(ctx context.Context, t *ticket) error {
	_, err := w.discord.Member(ctx, t.GuildID, t.OpenerID)
	var api *transport.APIError
	switch {
	case err == nil:
		return nil // they are back
	case !errors.As(err, &api) || api.Code != 10007:
		return err
	}
	if t.WarnedAt == nil {
		return w.warn(ctx, t, "left", fmt.Sprintf("tl%d", t.ID))
	}
	if wait := time.Until(t.WarnedAt.Add(w.grace)); wait > 0 {
		return river.JobSnooze(wait)
	}
	return w.close(ctx, t, ruleLeft)
}

// inactive reads the ticket's newest message from Discord — the gateway
// may miss one, the channel does not — and warns once the ticket has
// been quiet for the guild's inactivity period, then closes it if
// nobody wrote during the grace period. A thread Discord archived (after
// a week, or sooner) reads as any other and the warning unarchives it,
// so a period longer than the thread's archive works the same.
func (w *autoCloseWorker) inactive(ctx context.Context, t *ticket) error {
	s, err := loadSettings(ctx, w.db, t.GuildID)
	if err != nil || s.InactivitySecs == 0 {
		return err
	}
	page, err := w.discord.Messages(ctx, *t.ChannelID, rest.MessageQuery{Limit: 1})
	if gone(err) {
		return nil // deleted by hand: its delete event closes it
	}
	if err != nil {
		return err
	}
	last := t.OpenedAt
	byHuman := true
	if len(page) > 0 {
		last, byHuman = page[0].Timestamp, page[0].Author == nil || page[0].Author.ID != w.botID
	}
	period := time.Duration(s.InactivitySecs) * time.Second
	if t.WarnedAt != nil && byHuman && last.After(*t.WarnedAt) {
		// Someone wrote after the warning: start over.
		if _, err := w.db.Exec(ctx, `UPDATE tickets SET warned_at = NULL WHERE id = $1`, t.ID); err != nil {
			return err
		}
		t.WarnedAt = nil
	}
	if t.WarnedAt == nil {
		if wait := time.Until(last.Add(period)); wait > 0 {
			return river.JobSnooze(wait)
		}
		return w.warn(ctx, t, "inactive", fmt.Sprintf("ti%d.%d", t.ID, last.Unix()))
	}
	if wait := time.Until(t.WarnedAt.Add(w.grace)); wait > 0 {
		return river.JobSnooze(wait)
	}
	return w.close(ctx, t, ruleInactivity)
}

// warn posts the warning (once, by nonce), records when, and waits out
// the grace period.
func (w *autoCloseWorker) warn(ctx context.Context, t *ticket, kind, nonce string) error {
	loc := w.catalog.For(t.GuildLocale, t.Locale)
	text := loc.T("tickets.warn."+kind, map[string]any{"Opener": userMention(t.OpenerID),
		"When": fmt.Sprintf("<t:%d:R>", time.Now().Add(w.grace).Unix())})
	_, err := w.discord.CreateMessage(ctx, *t.ChannelID, rest.NewMessage{Content: text,
		AllowedMentions: &discordgo.MessageAllowedMentions{Users: []string{t.OpenerID}}, Nonce: nonce})
	if gone(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if _, err := w.db.Exec(ctx, `UPDATE tickets SET warned_at = now() WHERE id = $1`, t.ID); err != nil {
		return err
	}
	return river.JobSnooze(w.grace)
}

// close starts the ticket's close job, in one transaction with the mark.
func (w *autoCloseWorker) close(ctx context.Context, t *ticket, rule string) error {
	return pgx.BeginFunc(ctx, w.db, func(tx pgx.Tx) error {
		ok, err := markClosing(ctx, tx, t.ID, "", t.CloseReason)
		if err != nil || !ok {
			return err
		}
		return insertTx(ctx, tx, t.GuildID, closeJob(closeArgs{TicketID: t.ID, Rule: rule}))
	})
}
