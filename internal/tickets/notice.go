package tickets

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/bwmarrin/discordgo"
	"github.com/riverqueue/river"

	"github.com/herald-bot/herald/internal/discord/rest"
	"github.com/herald-bot/herald/internal/discord/transport"
	"github.com/herald-bot/herald/internal/followup"
	"github.com/herald-bot/herald/internal/i18n"
	"github.com/herald-bot/herald/internal/interaction"
	"github.com/herald-bot/herald/internal/interaction/customid"
	"github.com/herald-bot/herald/internal/outbox"
	"github.com/herald-bot/herald/internal/work"
)

// On Discord a private thread is seen by its members and by moderators
// (Manage Threads) only; mentioning a role adds nobody. So, as TicketsBot
// does, each thread-mode ticket is announced to staff in the notify
// channel (else the log channel) with a "Join ticket" button that adds
// the member of staff who clicks it.

const joinID = "tickets:1:join:{ticket}"

// noticeChannel is where a guild's staff notifications go; "" for none.
func noticeChannel(s *settings) string {
	return cmp.Or(deref(s.NotifyChannelID), deref(s.LogChannelID))
}

// renderNotice is a ticket's staff notification as its status is: open
// (with the Join button), claimed (with it) or closed (without).
func renderNotice(loc *i18n.Localizer, t *ticket) (string, []discordgo.MessageComponent, error) {
	content := loc.T("tickets.notice", map[string]any{"Number": t.Number, "Opener": userMention(t.OpenerID),
		"Thread": channelMention(deref(t.ChannelID))})
	if t.Topic != "" {
		content += "\n" + loc.T("tickets.welcome_topic", map[string]any{"Topic": t.Topic})
	}
	if t.Status == StatusClosing || t.Status == StatusClosed {
		return content + "\n" + loc.T("tickets.notice_closed", nil), []discordgo.MessageComponent{}, nil
	}
	if t.ClaimedBy != nil {
		content += "\n" + loc.T("tickets.notice_claimed", map[string]any{"Member": userMention(*t.ClaimedBy)})
	}
	id, err := customid.Fill(joinID, strconv.FormatInt(t.ID, 10))
	if err != nil {
		return "", nil, err
	}
	return content, []discordgo.MessageComponent{discordgo.ActionsRow{Components: []discordgo.MessageComponent{
		discordgo.Button{Label: loc.T("tickets.join_button", nil), Style: discordgo.PrimaryButton, CustomID: id,
			Emoji: &discordgo.ComponentEmoji{Name: "📥"}},
	}}}, nil
}

// postNotice announces a new thread-mode ticket to staff, once (by
// nonce), pinging the support role there. It returns the channel and
// message, or "" when there is no channel to post in or herald may not
// post there: the ticket opens all the same.
func (d *deps) postNotice(ctx context.Context, s *settings, t *ticket) (channelID, messageID string, err error) {
	channelID = noticeChannel(s)
	if channelID == "" {
		return "", "", nil
	}
	content, buttons, err := renderNotice(d.catalog.For(t.GuildLocale, t.Locale), t)
	if err != nil {
		return "", "", river.JobCancel(err)
	}
	m, err := d.discord.CreateMessage(ctx, channelID, rest.NewMessage{Content: content, Components: buttons,
		AllowedMentions: &discordgo.MessageAllowedMentions{Roles: []string{s.SupportRole}}, Nonce: fmt.Sprintf("tn%d", t.ID)})
	var api *transport.APIError
	if gone(err) || errors.As(err, &api) && api.Class() == transport.Permission {
		d.log.Warn("tickets: staff notification not posted", "ticket", t.ID, "channel", channelID, "err", err)
		return "", "", nil
	}
	if err != nil {
		return "", "", err
	}
	return channelID, m.ID, nil
}

// refreshNotice edits the ticket's staff notification to its status; a
// notification deleted by hand stays deleted.
func (d *deps) refreshNotice(ctx context.Context, t *ticket) error {
	if t.NoticeChannelID == nil || t.NoticeMessageID == nil {
		return nil
	}
	content, buttons, err := renderNotice(d.catalog.For(t.GuildLocale, t.Locale), t)
	if err != nil {
		return river.JobCancel(err)
	}
	_, err = d.discord.EditMessage(ctx, *t.NoticeChannelID, *t.NoticeMessageID, rest.MessageEdit{Content: &content,
		Components: &buttons, AllowedMentions: &discordgo.MessageAllowedMentions{}})
	if gone(err) {
		return nil
	}
	return err
}

// join is the notification's button: a member of staff is added to the
// ticket's thread by a job, which then links it; anyone else is told who
// may join.
func (d *deps) join(ctx context.Context, in *interaction.Interaction) (*discordgo.InteractionResponse, error) {
	id, err := strconv.ParseInt(in.Vars["ticket"], 10, 64)
	if err != nil {
		return say(in, "not_in_ticket", nil), nil
	}
	t, err := loadTicket(ctx, in.DB(), id)
	if errors.Is(err, errNoTicket) || err == nil && t.GuildID != in.GuildID {
		return say(in, "not_in_ticket", nil), nil
	}
	if err != nil {
		return nil, err
	}
	s, err := loadSettings(ctx, in.DB(), in.GuildID)
	if errors.Is(err, errNoSettings) {
		return say(in, "not_ready", nil), nil
	}
	if err != nil {
		return nil, err
	}
	if !isStaff(in, s) {
		return say(in, "join_not_staff", map[string]any{"Role": roleMention(s.SupportRole)}), nil
	}
	if t.Status != StatusOpen || t.ChannelID == nil {
		return notOpen(in, t), nil
	}
	return followup.Defer(ctx, in, work.Interactive, joinArgs{TicketID: t.ID, UserID: in.UserID(), Reply: followup.ReplyTo(in)})
}

// joinArgs adds a member of staff to a ticket's thread.
type joinArgs struct {
	TicketID int64  `json:"ticket_id"`
	UserID   string `json:"user_id"`
	followup.Reply
}

func (joinArgs) Kind() string { return "tickets_join" }

type joinWorker struct {
	river.WorkerDefaults[joinArgs]
	*deps
}

// Work adds the member (adding twice changes nothing), unarchiving the
// thread Discord archived, and links the thread; a ticket closed
// meanwhile is reported as such.
func (w *joinWorker) Work(ctx context.Context, j *river.Job[joinArgs]) error {
	a := j.Args
	t, err := loadTicket(ctx, w.db, a.TicketID)
	if err != nil {
		return err
	}
	loc := a.In(w.catalog)
	text := loc.T("tickets.not_open", map[string]any{"Number": t.Number})
	if t.Status == StatusOpen && t.ChannelID != nil {
		err := w.onThread(ctx, t, fmt.Sprintf("ticket #%d: join", t.Number), func() error {
			return w.discord.AddThreadMember(ctx, *t.ChannelID, a.UserID)
		})
		switch {
		case err == nil:
			text = loc.T("tickets.joined", map[string]any{"Number": t.Number, "Thread": channelMention(*t.ChannelID)})
		case !gone(err):
			return err
		}
	}
	err = a.Answer(ctx, w.followups, work.Interactive, j.ID, text)
	if errors.Is(err, outbox.ErrTokenExpired) {
		return nil
	}
	return err
}
