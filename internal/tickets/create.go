package tickets

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/herald-bot/herald/internal/discord/rest"
	"github.com/herald-bot/herald/internal/discord/transport"
	"github.com/herald-bot/herald/internal/followup"
	"github.com/herald-bot/herald/internal/outbox"
	"github.com/herald-bot/herald/internal/tickets/channelname"
	"github.com/herald-bot/herald/internal/work"
)

// openArgs is a ticket's open job: create its thread or channel, post the
// welcome message, and fill the member's deferred reply.
type openArgs struct {
	TicketID int64 `json:"ticket_id"`
	// ParentID is where thread mode starts the private thread.
	ParentID   string `json:"parent_id"`
	OpenerName string `json:"opener_name"`
}

func (openArgs) Kind() string { return "tickets_open" }

type openWorker struct {
	river.WorkerDefaults[openArgs]
	*deps
}

// failure is a reason a ticket could not be opened, as a locale key under
// tickets.fail.
type failure struct{ Key string }

func (f *failure) Error() string { return "tickets: open failed: " + f.Key }

// Permissions a ticket's members get on its channel in channel mode.
const memberAllow = discordgo.PermissionViewChannel | discordgo.PermissionSendMessages | discordgo.PermissionReadMessageHistory |
	discordgo.PermissionAttachFiles | discordgo.PermissionEmbedLinks

func (w *openWorker) Work(ctx context.Context, j *river.Job[openArgs]) error {
	t, err := loadTicket(ctx, w.db, j.Args.TicketID)
	if errors.Is(err, errNoTicket) {
		return nil
	}
	if err != nil {
		return err
	}
	// A ticket failed, or open and closed since, by an attempt killed
	// before it told the member: only the reply is left to send.
	if t.Status == StatusFailed {
		return w.tell(ctx, t, w.failText(t))
	}
	if t.Status == StatusOpening || t.Status == StatusOpen {
		if err := w.openTicket(ctx, j, t); err != nil {
			return err
		}
	}
	loc := w.catalog.For(t.Locale, t.GuildLocale)
	if t.ChannelID == nil { // a closed ticket's deleted channel
		return w.tell(ctx, t, loc.T("tickets.opened_closed", map[string]any{"Number": t.Number}))
	}
	return w.tell(ctx, t, loc.T("tickets.opened", map[string]any{"Channel": channelMention(*t.ChannelID), "Number": t.Number}))
}

// openTicket creates the ticket or, failing for good, marks it failed
// (then the member is told why).
func (w *openWorker) openTicket(ctx context.Context, j *river.Job[openArgs], t *ticket) error {
	s, err := loadSettings(ctx, w.db, t.GuildID)
	if errors.Is(err, errNoSettings) {
		return w.fail(ctx, t, &failure{Key: "not_setup"})
	}
	if err != nil {
		return err
	}
	if err := w.numberTicket(ctx, t); err != nil {
		return err
	}
	if err := w.create(ctx, j, s, t); err != nil {
		var f *failure
		if errors.As(err, &f) || j.Attempt >= j.MaxAttempts {
			if f == nil {
				f = &failure{Key: "retries_exhausted"}
			}
			return w.fail(ctx, t, f)
		}
		return err
	}
	return nil
}

// numberTicket gives t the guild's next ticket number unless an earlier
// attempt did. The settings row is held only for this short transaction,
// so opens of a guild wait on each other here, in their jobs, never on
// the click's fast path.
func (w *openWorker) numberTicket(ctx context.Context, t *ticket) error {
	if t.Number != 0 {
		return nil
	}
	return pgx.BeginFunc(ctx, w.db, func(tx pgx.Tx) error {
		var number *int
		if err := tx.QueryRow(ctx, `SELECT number FROM tickets WHERE id = $1 FOR UPDATE`, t.ID).Scan(&number); err != nil {
			return fmt.Errorf("tickets: number: %w", err)
		}
		if number == nil {
			number = new(int)
			if err := tx.QueryRow(ctx, `UPDATE ticket_settings SET next_number = next_number + 1 WHERE guild_id = $1 RETURNING next_number - 1`,
				t.GuildID).Scan(number); err != nil {
				return fmt.Errorf("tickets: number: %w", err)
			}
			if _, err := tx.Exec(ctx, `UPDATE tickets SET number = $2 WHERE id = $1`, t.ID, *number); err != nil {
				return fmt.Errorf("tickets: number: %w", err)
			}
		}
		t.Number = *number
		return nil
	})
}

// tell fills the member's deferred reply (once: its key is the ticket's).
func (w *openWorker) tell(ctx context.Context, t *ticket, text string) error {
	_, err := w.followups.Send(ctx, followup.Update{Lane: work.Events, InteractionID: t.InteractionID, Key: "tickets-open", Content: text})
	if errors.Is(err, outbox.ErrTokenExpired) {
		return nil // the ticket is done; only the reply is lost
	}
	return err
}

// create makes the ticket's thread or channel (once: its id is recorded
// before anything else happens) and posts the welcome message, then marks
// the ticket open. Errors Discord gives for good become a *failure.
func (w *openWorker) create(ctx context.Context, j *river.Job[openArgs], s *settings, t *ticket) error {
	if t.ChannelID == nil {
		name := channelname.Ticket(s.Naming, j.Args.OpenerName, t.Number)
		var id string
		var err error
		if t.Mode == ModeThread {
			id, err = w.createThread(ctx, j, name, t)
		} else {
			id, err = w.createChannel(ctx, s, t, name)
		}
		if err != nil {
			return classify(err, "needs_permission")
		}
		if _, err := w.db.Exec(ctx, `UPDATE tickets SET channel_id = $2 WHERE id = $1`, t.ID, id); err != nil {
			return err
		}
		t.ChannelID = &id
	}
	if t.Status == StatusOpen {
		return nil
	}
	if err := w.openSteps(ctx, s, t); err != nil {
		return err
	}
	tx, err := w.db.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	var closeNow bool
	err = tx.QueryRow(ctx, `UPDATE tickets SET status = CASE WHEN close_when_open THEN 'closing' ELSE 'open' END, last_activity_at = now()
		WHERE id = $1 AND status = 'opening' RETURNING close_when_open`, t.ID).Scan(&closeNow)
	switch {
	case errors.Is(err, pgx.ErrNoRows): // an earlier attempt opened it
		return nil
	case err != nil:
		return err
	case closeNow: // closed while it was being opened
		if err := insertTx(ctx, tx, t.GuildID, closeJob(closeArgs{TicketID: t.ID, Rule: ruleManual})); err != nil {
			return err
		}
		return tx.Commit(ctx)
	}
	if s.InactivitySecs > 0 {
		at := time.Now().Add(time.Duration(s.InactivitySecs) * time.Second)
		if err := insertTx(ctx, tx, t.GuildID, autoCloseJob(t.ID, ruleInactivity, at)); err != nil {
			return err
		}
	}
	return tx.Commit(ctx)
}

// openStep is how far opening got after the ticket's thread or channel
// was made.
type openStep int16

const (
	stepMemberAdded openStep = iota + 1
	stepWelcomed
	stepNoticed
)

// openSteps adds the opener to the thread, posts the welcome and the
// staff notification, recording each as done, so an attempt after a
// failure, a timeout or a crash makes none of the calls that went through
// again (in a Discord outage each of them may have taken several tries).
func (w *openWorker) openSteps(ctx context.Context, s *settings, t *ticket) error {
	steps := []struct {
		step openStep
		do   func() error
	}{
		{stepMemberAdded, func() error {
			if t.Mode != ModeThread {
				return nil
			}
			// A retry may come after Discord archived the new thread.
			return classify(w.onThread(ctx, t, fmt.Sprintf("ticket #%d", t.Number), func() error {
				return w.discord.AddThreadMember(ctx, *t.ChannelID, t.OpenerID)
			}), "needs_thread_members")
		}},
		{stepWelcomed, func() error { return classify(w.welcome(ctx, s, t), "needs_send") }},
		{stepNoticed, func() error {
			if t.Mode != ModeThread {
				return nil
			}
			channel, message, err := w.postNotice(ctx, s, t)
			if err != nil {
				return err
			}
			_, err = w.db.Exec(ctx, `UPDATE tickets SET notice_channel_id = NULLIF($2, ''), notice_message_id = NULLIF($3, '') WHERE id = $1`,
				t.ID, channel, message)
			return err
		}},
	}
	for _, st := range steps {
		if t.OpenStep >= st.step {
			continue
		}
		if err := st.do(); err != nil {
			return err
		}
		if _, err := w.db.Exec(ctx, `UPDATE tickets SET open_step = $2 WHERE id = $1`, t.ID, st.step); err != nil {
			return err
		}
		t.OpenStep = st.step
	}
	return nil
}

// classify turns what Discord refuses for good into a failure the member
// is told about; anything else is retried. A missing permission fails
// with the key of the step that met it, as each step needs another
// permission (failText).
func classify(err error, permissionKey string) error {
	var api *transport.APIError
	if !errors.As(err, &api) {
		return err
	}
	switch {
	case api.Code == 30013:
		return &failure{Key: "guild_full"}
	case api.Class() == transport.Permission:
		return &failure{Key: permissionKey}
	case api.Class() == transport.NotFound:
		return &failure{Key: "channel_missing"}
	case api.Class() == transport.Invalid:
		return &failure{Key: "invalid"}
	}
	return err
}

// fail marks the ticket failed with the reason, deletes what was made of
// it, and tells the member why. Deleting a thread takes Manage Threads,
// which may be what is missing: then the thread, empty but for herald,
// is archived as its owner may.
func (w *openWorker) fail(ctx context.Context, t *ticket, f *failure) error {
	if t.ChannelID != nil {
		err := w.discord.DeleteChannel(ctx, *t.ChannelID, "ticket could not be opened")
		var api *transport.APIError
		if t.Mode == ModeThread && errors.As(err, &api) && api.Class() == transport.Permission {
			yes := true
			_, err = w.discord.ModifyChannel(ctx, *t.ChannelID, rest.ChannelEdit{Archived: &yes}, "ticket could not be opened")
		}
		if err != nil && !gone(err) {
			return err
		}
	}
	if _, err := w.db.Exec(ctx, `UPDATE tickets SET status = 'failed', fail_reason = $2, channel_id = NULL WHERE id = $1`, t.ID, f.Key); err != nil {
		return err
	}
	t.FailReason = f.Key
	return w.tell(ctx, t, w.failText(t))
}

// failText tells the member why their ticket could not be opened, naming
// the permission the failed step needs (Discord's Channel resource):
// Create Private Threads (thread mode) or Manage Channels to create the
// ticket; Manage Threads to add the opener to a private thread members
// cannot invite to (thread-members, invitable); Send Messages in Threads
// or Send Messages to post in it.
func (w *openWorker) failText(t *ticket) string {
	var perm string
	switch {
	case t.FailReason == "needs_send" && t.Mode == ModeThread:
		perm = "Send Messages in Threads"
	case t.FailReason == "needs_send":
		perm = "Send Messages"
	case t.Mode == ModeThread:
		perm = "Create Private Threads"
	default:
		perm = "Manage Channels"
	}
	loc := w.catalog.For(t.Locale, t.GuildLocale)
	reason := loc.T("tickets.fail."+t.FailReason, map[string]any{"Permission": perm})
	return loc.T("tickets.open_failed", map[string]any{"Reason": reason})
}

// createThread starts the ticket's private thread, which only its members
// and moderators see; the opener is added next. A retry whose earlier
// attempt asked for the thread first looks for it among the guild's
// active ones: that create may have landed while its answer was lost or
// its process killed before the id was recorded. The name carries the
// ticket's number, unique in the guild, so it finds this ticket's thread
// and no other; an attempt after none that got that far spends no
// request on it.
func (w *openWorker) createThread(ctx context.Context, j *river.Job[openArgs], name string, t *ticket) (string, error) {
	parentID := j.Args.ParentID
	if t.CreateSent {
		threads, err := w.discord.ActiveThreads(ctx, t.GuildID)
		if err != nil {
			return "", err
		}
		for _, th := range threads {
			if th.ParentID == parentID && th.Name == name && th.OwnerID == w.botID && th.Type == discordgo.ChannelTypeGuildPrivateThread {
				return th.ID, nil
			}
		}
	}
	if _, err := w.db.Exec(ctx, `UPDATE tickets SET create_sent = true WHERE id = $1`, t.ID); err != nil {
		return "", err
	}
	invitable := false
	th, err := w.discord.CreateThread(ctx, parentID, rest.NewThread{Name: name, Type: discordgo.ChannelTypeGuildPrivateThread,
		AutoArchiveDuration: 10080, Invitable: &invitable}, fmt.Sprintf("ticket #%d", t.Number))
	if errors.As(err, new(*transport.RateLimitedError)) {
		// Not made: the rate limit held it back (the job snoozes) or
		// Discord answered 429 to every try.
		if _, err := w.db.Exec(ctx, `UPDATE tickets SET create_sent = false WHERE id = $1`, t.ID); err != nil {
			return "", err
		}
	}
	if err != nil {
		return "", err
	}
	return th.ID, nil
}

// channelTopic marks a ticket's channel, so a retry whose create answer
// was lost finds the channel instead of making a second one.
func channelTopic(t *ticket) string {
	return fmt.Sprintf("#%d · %s", t.Number, userMention(t.OpenerID))
}

// createChannel makes the ticket's channel, visible to its opener, the
// support role and herald only, in the first of the guild's ticket
// categories with room.
func (w *openWorker) createChannel(ctx context.Context, s *settings, t *ticket, name string) (string, error) {
	chans, err := w.discord.GuildChannels(ctx, t.GuildID)
	if err != nil {
		return "", err
	}
	topic := channelTopic(t)
	for _, c := range chans {
		if c.Topic == topic {
			return c.ID, nil
		}
	}
	if len(chans) >= maxGuildChannels {
		return "", &failure{Key: "guild_full"}
	}
	parent := ""
	if s.CategoryID != nil {
		if parent, err = w.category(ctx, s, t.GuildID, chans); err != nil {
			return "", err
		}
	}
	ch, err := w.discord.CreateChannel(ctx, t.GuildID, rest.NewChannel{Name: name, Type: discordgo.ChannelTypeGuildText, Topic: topic,
		ParentID: parent, Overwrites: []rest.Overwrite{
			{ID: t.GuildID, Type: discordgo.PermissionOverwriteTypeRole, Deny: discordgo.PermissionViewChannel},
			{ID: s.SupportRole, Type: discordgo.PermissionOverwriteTypeRole, Allow: memberAllow},
			{ID: t.OpenerID, Type: discordgo.PermissionOverwriteTypeMember, Allow: memberAllow},
			{ID: w.botID, Type: discordgo.PermissionOverwriteTypeMember, Allow: memberAllow},
		}}, fmt.Sprintf("ticket #%d", t.Number))
	var api *transport.APIError
	if parent != "" && errors.As(err, &api) && api.Code == 50035 {
		// Another ticket took the category's last place since it was
		// counted: the retry counts again (no %w, so it is not a failure).
		return "", fmt.Errorf("tickets: category %s filled meanwhile (%v)", parent, err)
	}
	if err != nil {
		return "", err
	}
	return ch.ID, nil
}

// Discord's caps: channels in a guild (categories included) and in one
// category.
const (
	maxGuildChannels    = 500
	maxCategoryChildren = 50
)

// category picks the first of the guild's ticket categories — the one
// configured, then the overflow ones herald made — with room for another
// channel, and makes a new overflow category when all are full.
func (w *openWorker) category(ctx context.Context, s *settings, guildID string, chans []*discordgo.Channel) (string, error) {
	byID := map[string]*discordgo.Channel{}
	children := map[string]int{}
	for _, c := range chans {
		byID[c.ID] = c
		if c.ParentID != "" {
			children[c.ParentID]++
		}
	}
	base := byID[*s.CategoryID]
	if base == nil || base.Type != discordgo.ChannelTypeGuildCategory {
		return "", &failure{Key: "category_missing"}
	}
	rows, err := w.db.Query(ctx, `SELECT category_id FROM ticket_categories WHERE guild_id = $1 ORDER BY position`, guildID)
	if err != nil {
		return "", err
	}
	overflow, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return "", err
	}
	candidates := []string{base.ID}
	for _, id := range overflow {
		if byID[id] != nil {
			candidates = append(candidates, id)
		}
	}
	for _, id := range candidates {
		if children[id] < maxCategoryChildren {
			return id, nil
		}
	}
	name := fmt.Sprintf("%s %d", base.Name, len(candidates)+1)
	cat := findCategory(chans, name)
	if cat == nil {
		// The new category and the ticket's channel both count.
		if len(chans)+2 > maxGuildChannels {
			return "", &failure{Key: "guild_full"}
		}
		if cat, err = w.discord.CreateChannel(ctx, guildID, rest.NewChannel{Name: name, Type: discordgo.ChannelTypeGuildCategory,
			Overwrites: []rest.Overwrite{{ID: guildID, Type: discordgo.PermissionOverwriteTypeRole, Deny: discordgo.PermissionViewChannel}}},
			"ticket categories are full"); err != nil {
			return "", err
		}
	}
	if _, err := w.db.Exec(ctx, `INSERT INTO ticket_categories (guild_id, category_id, position) VALUES ($1, $2, $3)
		ON CONFLICT DO NOTHING`, guildID, cat.ID, len(candidates)); err != nil {
		return "", err
	}
	return cat.ID, nil
}

// findCategory finds the category named name: an overflow category an
// earlier attempt made before its answer was lost.
func findCategory(chans []*discordgo.Channel, name string) *discordgo.Channel {
	for _, c := range chans {
		if c.Type == discordgo.ChannelTypeGuildCategory && c.Name == name {
			return c
		}
	}
	return nil
}

// welcome posts the ticket's first message: who opened it, its topic,
// the guild's welcome text, the intake form's answers, and the Close and
// Claim buttons. Its nonce makes a retry find the message instead of
// posting a second.
func (w *openWorker) welcome(ctx context.Context, s *settings, t *ticket) error {
	loc := w.catalog.For(t.GuildLocale, t.Locale)
	lines := []string{loc.T("tickets.welcome", map[string]any{"Opener": userMention(t.OpenerID), "Number": t.Number,
		"Support": roleMention(s.SupportRole)})}
	if t.Topic != "" {
		lines = append(lines, loc.T("tickets.welcome_topic", map[string]any{"Topic": t.Topic}))
	}
	if s.Welcome != "" {
		lines = append(lines, s.Welcome)
	}
	buttons, err := ticketButtons(loc, t.ID)
	if err != nil {
		return river.JobCancel(err)
	}
	_, err = w.discord.CreateMessage(ctx, *t.ChannelID, rest.NewMessage{Content: strings.Join(lines, "\n\n"), Components: buttons,
		Embeds:          answersEmbed(loc.T("tickets.answers_title", nil), t.Answers),
		AllowedMentions: &discordgo.MessageAllowedMentions{Users: []string{t.OpenerID}, Roles: []string{s.SupportRole}},
		Nonce:           fmt.Sprintf("tw%d", t.ID)})
	return err
}
