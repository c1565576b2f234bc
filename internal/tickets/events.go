package tickets

import (
	"context"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/herald-bot/herald/internal/work"
)

// eventTimeout bounds the database write an event handler makes.
const eventTimeout = 5 * time.Second

// Gateway events only record what they saw; the sweep job turns a
// recorded rule into durable jobs. An event lost in a reconnect is
// caught later: the inactivity job reads the channel itself, and every
// job that finds a ticket's channel gone (10003) leaves it to be closed.

func (d *deps) exec(what, sql string, args ...any) {
	ctx, cancel := context.WithTimeout(context.Background(), eventTimeout)
	defer cancel()
	if _, err := d.db.Exec(ctx, sql, args...); err != nil {
		d.log.Warn("recording a gateway event failed", "event", what, "err", err)
	}
}

// onMessageCreate keeps the ticket's activity and its first response: the
// first message by someone other than the opener and herald.
func (d *deps) onMessageCreate(_ *discordgo.Session, e *discordgo.MessageCreate) {
	if e.GuildID == "" || e.Author == nil || e.Author.ID == d.botID {
		return
	}
	d.exec("message", `UPDATE tickets SET last_activity_at = now(),
		first_response_at = CASE WHEN first_response_at IS NULL AND opener_id <> $2 THEN now() ELSE first_response_at END,
		first_responder = CASE WHEN first_responder IS NULL AND opener_id <> $2 THEN $2 ELSE first_responder END
		WHERE channel_id = $1 AND status = 'open'`, e.ChannelID, e.Author.ID)
}

// onMemberRemove notes that openers left, for their guild's rule.
func (d *deps) onMemberRemove(_ *discordgo.Session, e *discordgo.GuildMemberRemove) {
	if e.User == nil {
		return
	}
	d.exec("member remove", `UPDATE tickets t SET pending_rule = 'left' FROM ticket_settings s
		WHERE t.guild_id = $1 AND t.opener_id = $2 AND t.status = 'open' AND s.guild_id = t.guild_id AND s.close_on_leave`,
		e.GuildID, e.User.ID)
}

// onChannelDelete and onThreadDelete note tickets deleted by hand, and
// panels whose channel went.
func (d *deps) onChannelDelete(_ *discordgo.Session, e *discordgo.ChannelDelete) {
	d.deleted(e.ID)
	d.exec("channel delete", `UPDATE ticket_panels SET state = 'target_missing' WHERE channel_id = $1`, e.ID)
}

func (d *deps) onThreadDelete(_ *discordgo.Session, e *discordgo.ThreadDelete) { d.deleted(e.ID) }

func (d *deps) deleted(channelID string) {
	d.exec("channel delete", `UPDATE tickets SET pending_rule = 'deleted' WHERE channel_id = $1 AND status IN ('open', 'closing')`, channelID)
}

// onMessageDelete notes a deleted panel: it is not posted again by itself.
func (d *deps) onMessageDelete(_ *discordgo.Session, e *discordgo.MessageDelete) {
	d.exec("message delete", `UPDATE ticket_panels SET state = 'target_missing' WHERE message_id = $1`, e.ID)
}

// sweepArgs is the periodic job that turns what gateway events recorded
// into durable jobs.
type sweepArgs struct{}

func (sweepArgs) Kind() string { return "tickets_sweep" }

// sweepEvery is how soon a recorded event becomes a job.
const sweepEvery = 5 * time.Second

func sweepJob() *river.PeriodicJob {
	return river.NewPeriodicJob(river.PeriodicInterval(sweepEvery), func() (river.JobArgs, *river.InsertOpts) {
		return sweepArgs{}, &river.InsertOpts{Queue: string(work.Events)}
	}, &river.PeriodicJobOpts{RunOnStart: true})
}

type sweepWorker struct {
	river.WorkerDefaults[sweepArgs]
	*deps
}

// Work schedules the opener-left warning of each ticket whose opener
// left, and closes each ticket whose channel was deleted by hand with
// the transcript of what is stored. Each ticket's rule is taken in the
// transaction that inserts its job, so it becomes exactly one job.
func (w *sweepWorker) Work(ctx context.Context, _ *river.Job[sweepArgs]) error {
	return pgx.BeginFunc(ctx, w.db, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `WITH picked AS (
				SELECT id, pending_rule FROM tickets WHERE pending_rule IS NOT NULL ORDER BY id LIMIT 100 FOR UPDATE SKIP LOCKED)
			UPDATE tickets t SET pending_rule = NULL FROM picked WHERE t.id = picked.id
			RETURNING t.id, t.guild_id, t.status, picked.pending_rule`)
		if err != nil {
			return err
		}
		type pending struct {
			id          int64
			guild, rule string
			st          Status
		}
		list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (pending, error) {
			var p pending
			return p, r.Scan(&p.id, &p.guild, &p.st, &p.rule)
		})
		if err != nil {
			return err
		}
		for _, p := range list {
			var job river.InsertManyParams
			switch {
			case p.rule == ruleLeft && p.st == StatusOpen:
				job = autoCloseJob(p.id, ruleLeft, time.Now())
			case p.rule == ruleDeleted:
				if _, err := tx.Exec(ctx, `UPDATE tickets SET channel_id = NULL WHERE id = $1`, p.id); err != nil {
					return err
				}
				ok, err := markClosing(ctx, tx, p.id, "", "")
				if err != nil || !ok {
					if err != nil {
						return err
					}
					continue // already closing: its job finds the channel gone
				}
				job = closeJob(closeArgs{TicketID: p.id, Rule: ruleDeleted})
			default:
				continue
			}
			if err := insertTx(ctx, tx, p.guild, job); err != nil {
				return err
			}
		}
		return nil
	})
}
