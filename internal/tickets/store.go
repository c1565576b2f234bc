package tickets

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
)

// settings is one guild's ticket configuration.
type settings struct {
	GuildID      string
	SupportRole  string
	Mode         Mode
	ChannelID    *string
	CategoryID   *string
	LogChannelID *string
	// NotifyChannelID is where thread mode's staff notifications go
	// (nil: the log channel).
	NotifyChannelID *string
	MaxOpen         int
	CooldownSecs    int
	InactivitySecs  int
	CloseOnLeave    bool
	DMTranscripts   bool
	Naming          string // number or username
	Welcome         string
}

// ticket is one ticket.
type ticket struct {
	ID            int64
	GuildID       string
	Number        int
	OpenerID      string
	Topic         string
	Status        Status
	Mode          Mode
	ChannelID     *string
	ClaimedBy     *string
	InteractionID string
	Locale        string
	GuildLocale   string
	FailReason    string
	CloseReason   string
	ClosedBy      *string
	OpenedAt      time.Time
	WarnedAt      *time.Time
	// NoticeChannelID and NoticeMessageID are the staff notification of
	// a thread-mode ticket.
	NoticeChannelID *string
	NoticeMessageID *string
	Answers         []answer
	// OpenStep is how far opening got after the thread or channel was
	// made (create.go).
	OpenStep openStep
	// CreateSent: an open attempt asked Discord for the ticket's thread.
	CreateSent bool
}

// answer is one question of a panel's intake form with the opener's
// answer.
type answer struct {
	Question string `json:"q"`
	Answer   string `json:"a"`
}

// querier is a pool or a transaction.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

var (
	errNoSettings = errors.New("tickets: the guild has not set tickets up")
	errNoTicket   = errors.New("tickets: no such ticket")
)

func loadSettings(ctx context.Context, q querier, guildID string) (*settings, error) {
	s := &settings{GuildID: guildID}
	err := q.QueryRow(ctx, `SELECT support_role, mode, channel_id, category_id, log_channel_id, notify_channel_id, max_open,
		cooldown_secs, inactivity_secs, close_on_leave, dm_transcripts, naming, welcome FROM ticket_settings WHERE guild_id = $1`, guildID).
		Scan(&s.SupportRole, &s.Mode, &s.ChannelID, &s.CategoryID, &s.LogChannelID, &s.NotifyChannelID, &s.MaxOpen, &s.CooldownSecs,
			&s.InactivitySecs, &s.CloseOnLeave, &s.DMTranscripts, &s.Naming, &s.Welcome)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, errNoSettings
	}
	if err != nil {
		return nil, fmt.Errorf("tickets: settings: %w", err)
	}
	return s, nil
}

// ticketColumns reads a ticket not numbered yet (still opening) as
// number 0.
const ticketColumns = `id, guild_id, COALESCE(number, 0), opener_id, topic, status, mode, channel_id, claimed_by, interaction_id,
	locale, guild_locale, fail_reason, close_reason, closed_by, opened_at, warned_at, notice_channel_id, notice_message_id, answers, open_step, create_sent`

func readTicket(ctx context.Context, q querier, sql string, args ...any) (*ticket, error) {
	t := &ticket{}
	err := q.QueryRow(ctx, `SELECT `+ticketColumns+` FROM tickets WHERE `+sql, args...).Scan(&t.ID, &t.GuildID, &t.Number,
		&t.OpenerID, &t.Topic, &t.Status, &t.Mode, &t.ChannelID, &t.ClaimedBy, &t.InteractionID, &t.Locale, &t.GuildLocale,
		&t.FailReason, &t.CloseReason, &t.ClosedBy, &t.OpenedAt, &t.WarnedAt, &t.NoticeChannelID, &t.NoticeMessageID, &t.Answers, &t.OpenStep, &t.CreateSent)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, errNoTicket
	}
	if err != nil {
		return nil, fmt.Errorf("tickets: read ticket: %w", err)
	}
	return t, nil
}

func loadTicket(ctx context.Context, q querier, id int64) (*ticket, error) {
	return readTicket(ctx, q, `id = $1`, id)
}

// lockTicketIn reads the ticket whose thread or channel is channelID and
// locks it for the change the caller makes in tx.
func lockTicketIn(ctx context.Context, tx pgx.Tx, guildID, channelID string) (*ticket, error) {
	return readTicket(ctx, tx, `guild_id = $1 AND channel_id = $2 FOR UPDATE`, guildID, channelID)
}

func lockTicket(ctx context.Context, tx pgx.Tx, guildID string, id int64) (*ticket, error) {
	return readTicket(ctx, tx, `guild_id = $1 AND id = $2 FOR UPDATE`, guildID, id)
}

// panelTarget is a panel's sync target.
func panelTarget(id int64) string { return "tickets-panel:" + strconv.FormatInt(id, 10) }

// panel is one published panel with its topics.
type panel struct {
	ID        int64
	GuildID   string
	ChannelID string
	MessageID *string
	Title     string
	Locale    string
	State     PanelState
	Revision  int64
	Topics    []topic
	// Questions are the panel's intake form, in order (none: no form).
	Questions []string
}

type topic struct {
	ID    int64
	Label string
}

func loadPanel(ctx context.Context, q querier, id int64) (*panel, error) {
	p := &panel{ID: id}
	err := q.QueryRow(ctx, `SELECT guild_id, channel_id, message_id, title, locale, state, revision
		FROM ticket_panels WHERE id = $1`, id).Scan(&p.GuildID, &p.ChannelID, &p.MessageID, &p.Title, &p.Locale, &p.State, &p.Revision)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, errNoPanel
	}
	if err != nil {
		return nil, fmt.Errorf("tickets: read panel: %w", err)
	}
	rows, err := q.Query(ctx, `SELECT id, label FROM ticket_topics WHERE panel_id = $1 ORDER BY position, id`, id)
	if err != nil {
		return nil, fmt.Errorf("tickets: read topics: %w", err)
	}
	p.Topics, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (topic, error) {
		var t topic
		return t, r.Scan(&t.ID, &t.Label)
	})
	if err != nil {
		return nil, fmt.Errorf("tickets: read topics: %w", err)
	}
	rows, err = q.Query(ctx, `SELECT label FROM ticket_questions WHERE panel_id = $1 ORDER BY position`, id)
	if err != nil {
		return nil, fmt.Errorf("tickets: read questions: %w", err)
	}
	if p.Questions, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
		return nil, fmt.Errorf("tickets: read questions: %w", err)
	}
	return p, nil
}

var errNoPanel = errors.New("tickets: no such panel")

func (p *panel) topic(id int64) (topic, bool) {
	for _, t := range p.Topics {
		if t.ID == id {
			return t, true
		}
	}
	return topic{}, false
}
