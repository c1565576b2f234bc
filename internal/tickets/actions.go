package tickets

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/riverqueue/river"

	"github.com/herald-bot/herald/internal/discord/rest"
	"github.com/herald-bot/herald/internal/interaction/customid"
)

// actionArgs is a staff action's event job: the change on Discord, then
// the message that tells the ticket about it.
type actionArgs struct {
	TicketID int64  `json:"ticket_id"`
	Action   Action `json:"action"`
	ActorID  string `json:"actor_id"`
	TargetID string `json:"target_id,omitempty"`
	Name     string `json:"name,omitempty"`
	Reason   string `json:"reason,omitempty"`
}

func (actionArgs) Kind() string { return "tickets_action" }

type actionWorker struct {
	river.WorkerDefaults[actionArgs]
	*deps
}

// Work is safe to run again: each change leaves Discord as one run does,
// and the message's nonce is the job's.
func (w *actionWorker) Work(ctx context.Context, j *river.Job[actionArgs]) error {
	a := j.Args
	t, err := loadTicket(ctx, w.db, a.TicketID)
	if errors.Is(err, errNoTicket) {
		return nil
	}
	// A ticket closed since the action stays as its close left it (its
	// thread archived and locked): nothing changes, nothing is posted.
	if err != nil || t.ChannelID == nil || t.Status != StatusOpen {
		return err
	}
	ch := *t.ChannelID
	reason := fmt.Sprintf("ticket #%d: %s", t.Number, a.Action)
	no := false
	switch {
	case a.Action == ActionAdd && t.Mode == ModeThread:
		err = w.onThread(ctx, t, reason, func() error { return w.discord.AddThreadMember(ctx, ch, a.TargetID) })
	case a.Action == ActionAdd:
		err = w.discord.SetOverwrite(ctx, ch, rest.Overwrite{ID: a.TargetID, Type: discordgo.PermissionOverwriteTypeMember, Allow: memberAllow}, reason)
	case a.Action == ActionRemove && t.Mode == ModeThread:
		err = w.onThread(ctx, t, reason, func() error { return w.discord.RemoveThreadMember(ctx, ch, a.TargetID) })
	case a.Action == ActionRemove:
		err = w.discord.DeleteOverwrite(ctx, ch, a.TargetID, reason)
	case a.Action == ActionRename && t.Mode == ModeThread:
		// Discord renames an archived thread only in a PATCH that
		// unarchives it: one request either way.
		_, err = w.discord.ModifyChannel(ctx, ch, rest.ChannelEdit{Name: &a.Name, Archived: &no}, reason)
	case a.Action == ActionRename:
		_, err = w.discord.ModifyChannel(ctx, ch, rest.ChannelEdit{Name: &a.Name}, reason)
	case a.Action == ActionReopen:
		_, err = w.discord.ModifyChannel(ctx, ch, rest.ChannelEdit{Archived: &no, Locked: &no}, reason)
	}
	if a.Action == ActionRemove && apiCode(err) == 10007 {
		err = nil // not in the thread: removed all the same
	}
	if gone(err) {
		return nil // the ticket's channel was deleted; its delete event closes it
	}
	if err != nil {
		return err
	}
	msg, err := w.message(t, a)
	if err != nil {
		return river.JobCancel(err)
	}
	msg.Nonce = "ta" + strconv.FormatInt(j.ID, 10)
	_, err = w.discord.CreateMessage(ctx, ch, msg)
	if gone(err) {
		return nil
	}
	if err != nil {
		return err
	}
	switch a.Action {
	case ActionClaim, ActionUnclaim, ActionTransfer, ActionReopen:
		// Staff see in the notification who has the ticket, and may join
		// a reopened one again.
		return w.refreshNotice(ctx, t)
	}
	return nil
}

// message is what the ticket is told, in the ticket's language, pinging
// only the member it concerns.
func (w *actionWorker) message(t *ticket, a actionArgs) (rest.NewMessage, error) {
	loc := w.catalog.For(t.GuildLocale, t.Locale)
	vars := map[string]any{"Actor": userMention(a.ActorID), "Member": userMention(a.TargetID), "Name": a.Name,
		"Opener": userMention(t.OpenerID), "Reason": a.Reason}
	m := rest.NewMessage{Content: loc.T("tickets.event."+string(a.Action), vars), AllowedMentions: &discordgo.MessageAllowedMentions{}}
	switch a.Action {
	case ActionAdd, ActionTransfer:
		m.AllowedMentions.Users = []string{a.TargetID}
	case ActionCloseRequest:
		if a.Reason != "" {
			m.Content += "\n" + loc.T("tickets.event.reason", vars)
		}
		m.Content += "\n" + loc.T("tickets.event.close_request_auto", map[string]any{"When": fmt.Sprintf("<t:%d:R>", time.Now().Add(w.grace).Unix())})
		m.AllowedMentions.Users = []string{t.OpenerID}
		id, err := customid.Fill(confirmID, strconv.FormatInt(t.ID, 10))
		if err != nil {
			return m, err
		}
		m.Components = []discordgo.MessageComponent{discordgo.ActionsRow{Components: []discordgo.MessageComponent{
			discordgo.Button{Label: loc.T("tickets.confirm_button", nil), Style: discordgo.DangerButton, CustomID: id},
		}}}
	}
	return m, nil
}
