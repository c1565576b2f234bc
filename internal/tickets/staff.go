package tickets

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/herald-bot/herald/internal/i18n"
	"github.com/herald-bot/herald/internal/interaction"
	"github.com/herald-bot/herald/internal/interaction/customid"
	"github.com/herald-bot/herald/internal/outbox"
	"github.com/herald-bot/herald/internal/tickets/channelname"
	"github.com/herald-bot/herald/internal/work"
)

// ticketButtons are the Close and Claim buttons of a ticket's welcome.
func ticketButtons(loc *i18n.Localizer, ticketID int64) ([]discordgo.MessageComponent, error) {
	id := strconv.FormatInt(ticketID, 10)
	closeBtn, err := customid.Fill(closeID, id)
	if err != nil {
		return nil, err
	}
	claimBtn, err := customid.Fill(claimID, id)
	if err != nil {
		return nil, err
	}
	return []discordgo.MessageComponent{discordgo.ActionsRow{Components: []discordgo.MessageComponent{
		discordgo.Button{Label: loc.T("tickets.close_button", nil), Style: discordgo.DangerButton, CustomID: closeBtn,
			Emoji: &discordgo.ComponentEmoji{Name: "🔒"}},
		discordgo.Button{Label: loc.T("tickets.claim_button", nil), Style: discordgo.SecondaryButton, CustomID: claimBtn,
			Emoji: &discordgo.ComponentEmoji{Name: "🙋"}},
	}}}, nil
}

// isStaff reports whether the member may work tickets: the support role,
// or Manage Server (read from the payload, costing no request).
func isStaff(in *interaction.Interaction, s *settings) bool {
	return slices.Contains(in.Member.Roles, s.SupportRole) ||
		in.Member.Permissions&(discordgo.PermissionManageGuild|discordgo.PermissionAdministrator) != 0
}

// ticketAction is a handler's work on a locked ticket: its answer, and
// the event jobs to enqueue (none: nothing to post).
type ticketAction func(tx pgx.Tx, t *ticket, s *settings) (*discordgo.InteractionResponse, []river.InsertManyParams, error)

// announce is the event job that carries out a staff action on Discord and
// tells the ticket.
func announce(in *interaction.Interaction, t *ticket, a actionArgs) river.InsertManyParams {
	a.TicketID, a.ActorID = t.ID, in.UserID()
	return river.InsertManyParams{Args: a, InsertOpts: &river.InsertOpts{Queue: string(work.Events)}}
}

// inTicket runs fn on the ticket the command runs in, locked in the fast
// path's transaction; staffOnly refuses members without the support role.
// The jobs fn asks for are enqueued as events, never merged or dropped,
// in one batch: the interaction's idempotency key covers them all.
func (d *deps) inTicket(ctx context.Context, in *interaction.Interaction, staffOnly bool, fn ticketAction) (*discordgo.InteractionResponse, error) {
	tx, err := in.Tx(ctx)
	if err != nil {
		return nil, err
	}
	t, err := lockTicketIn(ctx, tx, in.GuildID, in.ChannelID)
	if errors.Is(err, errNoTicket) {
		return say(in, "not_in_ticket", nil), nil
	}
	if err != nil {
		return nil, err
	}
	return d.onTicket(ctx, in, tx, t, staffOnly, fn)
}

func (d *deps) onTicket(ctx context.Context, in *interaction.Interaction, tx pgx.Tx, t *ticket, staffOnly bool, fn ticketAction) (*discordgo.InteractionResponse, error) {
	s, err := loadSettings(ctx, tx, in.GuildID)
	if errors.Is(err, errNoSettings) {
		return say(in, "not_ready", nil), nil
	}
	if err != nil {
		return nil, err
	}
	if staffOnly && !isStaff(in, s) {
		return say(in, "staff_only", map[string]any{"Role": roleMention(s.SupportRole)}), nil
	}
	resp, jobs, err := fn(tx, t, s)
	if err != nil || len(jobs) == 0 {
		return resp, err
	}
	return resp, in.Enqueue(ctx, outbox.IntentEvent, jobs...)
}

// byButton runs fn on the ticket a button's custom_id names.
func (d *deps) byButton(ctx context.Context, in *interaction.Interaction, staffOnly bool, fn ticketAction) (*discordgo.InteractionResponse, error) {
	id, err := strconv.ParseInt(in.Vars["ticket"], 10, 64)
	if err != nil {
		return say(in, "not_in_ticket", nil), nil
	}
	tx, err := in.Tx(ctx)
	if err != nil {
		return nil, err
	}
	t, err := lockTicket(ctx, tx, in.GuildID, id)
	if errors.Is(err, errNoTicket) {
		return say(in, "not_in_ticket", nil), nil
	}
	if err != nil {
		return nil, err
	}
	return d.onTicket(ctx, in, tx, t, staffOnly, fn)
}

// notOpen answers for a ticket that is not open (closing, closed...).
func notOpen(in *interaction.Interaction, t *ticket) *discordgo.InteractionResponse {
	return say(in, "not_open", map[string]any{"Number": t.Number})
}

func (d *deps) claim(ctx context.Context, in *interaction.Interaction) (*discordgo.InteractionResponse, error) {
	return d.inTicket(ctx, in, true, d.claimFn(ctx, in))
}

func (d *deps) claimButton(ctx context.Context, in *interaction.Interaction) (*discordgo.InteractionResponse, error) {
	return d.byButton(ctx, in, true, d.claimFn(ctx, in))
}

// claimFn makes the member the ticket's owner among staff; a claim is a
// first response when nobody answered yet.
func (d *deps) claimFn(ctx context.Context, in *interaction.Interaction) ticketAction {
	return func(tx pgx.Tx, t *ticket, s *settings) (*discordgo.InteractionResponse, []river.InsertManyParams, error) {
		user := in.UserID()
		switch {
		case t.Status != StatusOpen:
			return notOpen(in, t), nil, nil
		case t.ClaimedBy != nil && *t.ClaimedBy == user:
			return say(in, "claimed_already_yours", nil), nil, nil
		case t.ClaimedBy != nil:
			return say(in, "claimed_by", map[string]any{"Member": userMention(*t.ClaimedBy)}), nil, nil
		}
		if _, err := tx.Exec(ctx, `UPDATE tickets SET claimed_by = $2, first_response_at = COALESCE(first_response_at, now()),
			first_responder = COALESCE(first_responder, $2) WHERE id = $1`, t.ID, user); err != nil {
			return nil, nil, err
		}
		return say(in, "claimed", map[string]any{"Number": t.Number}), one(announce(in, t, actionArgs{Action: ActionClaim})), nil
	}
}

func (d *deps) unclaim(ctx context.Context, in *interaction.Interaction) (*discordgo.InteractionResponse, error) {
	return d.inTicket(ctx, in, true, func(tx pgx.Tx, t *ticket, s *settings) (*discordgo.InteractionResponse, []river.InsertManyParams, error) {
		if t.Status != StatusOpen {
			return notOpen(in, t), nil, nil
		}
		if t.ClaimedBy == nil {
			return say(in, "not_claimed", nil), nil, nil
		}
		if _, err := tx.Exec(ctx, `UPDATE tickets SET claimed_by = NULL WHERE id = $1`, t.ID); err != nil {
			return nil, nil, err
		}
		return say(in, "unclaimed", map[string]any{"Number": t.Number}), one(announce(in, t, actionArgs{Action: ActionUnclaim})), nil
	})
}

// member reads the user option "member": a member of the guild other than
// a bot.
func member(in *interaction.Interaction) (*discordgo.Member, bool) {
	u, m, ok := in.Options().User("member")
	if !ok || m == nil || u.Bot {
		return nil, false
	}
	return m, true
}

func (d *deps) addMember(ctx context.Context, in *interaction.Interaction) (*discordgo.InteractionResponse, error) {
	return d.inTicket(ctx, in, true, func(tx pgx.Tx, t *ticket, s *settings) (*discordgo.InteractionResponse, []river.InsertManyParams, error) {
		m, ok := member(in)
		if !ok {
			return say(in, "bad_member", nil), nil, nil
		}
		vars := map[string]any{"Member": userMention(m.User.ID)}
		if t.Status != StatusOpen {
			return notOpen(in, t), nil, nil
		}
		if m.User.ID == t.OpenerID {
			return say(in, "member_already", vars), nil, nil
		}
		tag, err := tx.Exec(ctx, `INSERT INTO ticket_members (ticket_id, user_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`, t.ID, m.User.ID)
		if err != nil {
			return nil, nil, err
		}
		if tag.RowsAffected() == 0 {
			return say(in, "member_already", vars), nil, nil
		}
		return say(in, "member_added", vars), one(announce(in, t, actionArgs{Action: ActionAdd, TargetID: m.User.ID})), nil
	})
}

func (d *deps) removeMember(ctx context.Context, in *interaction.Interaction) (*discordgo.InteractionResponse, error) {
	return d.inTicket(ctx, in, true, func(tx pgx.Tx, t *ticket, s *settings) (*discordgo.InteractionResponse, []river.InsertManyParams, error) {
		m, ok := member(in)
		if !ok {
			return say(in, "bad_member", nil), nil, nil
		}
		vars := map[string]any{"Member": userMention(m.User.ID)}
		if t.Status != StatusOpen {
			return notOpen(in, t), nil, nil
		}
		if m.User.ID == t.OpenerID {
			return say(in, "remove_opener", vars), nil, nil
		}
		tag, err := tx.Exec(ctx, `DELETE FROM ticket_members WHERE ticket_id = $1 AND user_id = $2`, t.ID, m.User.ID)
		if err != nil {
			return nil, nil, err
		}
		if tag.RowsAffected() == 0 {
			return say(in, "member_not_added", vars), nil, nil
		}
		return say(in, "member_removed", vars), one(announce(in, t, actionArgs{Action: ActionRemove, TargetID: m.User.ID})), nil
	})
}

// transfer hands the claim to another member of staff.
func (d *deps) transfer(ctx context.Context, in *interaction.Interaction) (*discordgo.InteractionResponse, error) {
	return d.inTicket(ctx, in, true, func(tx pgx.Tx, t *ticket, s *settings) (*discordgo.InteractionResponse, []river.InsertManyParams, error) {
		m, ok := member(in)
		if !ok {
			return say(in, "bad_member", nil), nil, nil
		}
		vars := map[string]any{"Member": userMention(m.User.ID), "Role": roleMention(s.SupportRole)}
		if t.Status != StatusOpen {
			return notOpen(in, t), nil, nil
		}
		if !slices.Contains(m.Roles, s.SupportRole) {
			return say(in, "transfer_not_staff", vars), nil, nil
		}
		if t.ClaimedBy != nil && *t.ClaimedBy == m.User.ID {
			return say(in, "transfer_same", vars), nil, nil
		}
		if _, err := tx.Exec(ctx, `UPDATE tickets SET claimed_by = $2 WHERE id = $1`, t.ID, m.User.ID); err != nil {
			return nil, nil, err
		}
		return say(in, "transferred", vars), one(announce(in, t, actionArgs{Action: ActionTransfer, TargetID: m.User.ID})), nil
	})
}

// rename checks the name against Discord's rules for the ticket's kind of
// channel: a text channel keeps lower-case letters, digits, '-' and '_'.
func (d *deps) rename(ctx context.Context, in *interaction.Interaction) (*discordgo.InteractionResponse, error) {
	return d.inTicket(ctx, in, true, func(tx pgx.Tx, t *ticket, s *settings) (*discordgo.InteractionResponse, []river.InsertManyParams, error) {
		if t.Status != StatusOpen {
			return notOpen(in, t), nil, nil
		}
		name := strings.TrimSpace(in.Options().String("name"))
		if t.Mode == ModeChannel {
			name = channelname.Clean(name)
		}
		if name == "" || utf8.RuneCountInString(name) > 100 {
			return say(in, "bad_name", nil), nil, nil
		}
		return say(in, "renaming", map[string]any{"Name": name}), one(announce(in, t, actionArgs{Action: ActionRename, Name: name})), nil
	})
}

// closeRequest asks the opener to confirm the ticket may close; without
// an answer it closes after the grace period.
func (d *deps) closeRequest(ctx context.Context, in *interaction.Interaction) (*discordgo.InteractionResponse, error) {
	return d.inTicket(ctx, in, true, func(tx pgx.Tx, t *ticket, s *settings) (*discordgo.InteractionResponse, []river.InsertManyParams, error) {
		if t.Status != StatusOpen {
			return notOpen(in, t), nil, nil
		}
		reason := strings.TrimSpace(in.Options().String("reason"))
		if _, err := tx.Exec(ctx, `UPDATE tickets SET close_requested_at = now(), close_reason = $2 WHERE id = $1`, t.ID, reason); err != nil {
			return nil, nil, err
		}
		return say(in, "close_requested", nil), []river.InsertManyParams{announce(in, t, actionArgs{Action: ActionCloseRequest, Reason: reason}),
			autoCloseJob(t.ID, ruleRequest, time.Now().Add(d.grace))}, nil
	})
}

// reopen brings a closed ticket's archived thread back; a closed channel
// is gone, so channel mode cannot reopen.
func (d *deps) reopen(ctx context.Context, in *interaction.Interaction) (*discordgo.InteractionResponse, error) {
	return d.inTicket(ctx, in, true, func(tx pgx.Tx, t *ticket, s *settings) (*discordgo.InteractionResponse, []river.InsertManyParams, error) {
		if t.Mode != ModeThread {
			return say(in, "reopen_channel", nil), nil, nil
		}
		if t.Status != StatusClosed {
			return say(in, "reopen_not_closed", nil), nil, nil
		}
		_, err := tx.Exec(ctx, `UPDATE tickets SET status = 'open', closed_at = NULL, closed_by = NULL, close_reason = '',
			close_requested_at = NULL, warned_at = NULL, last_activity_at = now() WHERE id = $1`, t.ID)
		if err != nil {
			return nil, nil, err
		}
		jobs := []river.InsertManyParams{announce(in, t, actionArgs{Action: ActionReopen})}
		if s.InactivitySecs > 0 {
			jobs = append(jobs, autoCloseJob(t.ID, ruleInactivity, time.Now().Add(time.Duration(s.InactivitySecs)*time.Second)))
		}
		return say(in, "reopened", map[string]any{"Number": t.Number}), jobs, nil
	})
}

// info shows the ticket to anyone in it.
func (d *deps) info(ctx context.Context, in *interaction.Interaction) (*discordgo.InteractionResponse, error) {
	return d.inTicket(ctx, in, false, func(tx pgx.Tx, t *ticket, s *settings) (*discordgo.InteractionResponse, []river.InsertManyParams, error) {
		rows, err := tx.Query(ctx, `SELECT user_id FROM ticket_members WHERE ticket_id = $1 ORDER BY user_id`, t.ID)
		if err != nil {
			return nil, nil, err
		}
		added, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return nil, nil, err
		}
		claimed := in.Localizer.T("tickets.info_unclaimed", nil)
		if t.ClaimedBy != nil {
			claimed = userMention(*t.ClaimedBy)
		}
		members := in.Localizer.T("tickets.info_none", nil)
		if len(added) > 0 {
			for i := range added {
				added[i] = userMention(added[i])
			}
			members = strings.Join(added, ", ")
		}
		topic := t.Topic
		if topic == "" {
			topic = in.Localizer.T("tickets.info_none", nil)
		}
		return say(in, "info", map[string]any{"Number": t.Number, "Opener": userMention(t.OpenerID), "Status": in.Localizer.T("tickets.status."+string(t.Status), nil),
			"Claimed": claimed, "Members": members, "Topic": topic, "Opened": fmt.Sprintf("<t:%d:R>", t.OpenedAt.Unix())}), nil, nil
	})
}

func one(j river.InsertManyParams) []river.InsertManyParams { return []river.InsertManyParams{j} }
