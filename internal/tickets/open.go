package tickets

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/bwmarrin/discordgo"
	"github.com/riverqueue/river"

	"github.com/herald-bot/herald/internal/interaction"
	"github.com/herald-bot/herald/internal/outbox"
	"github.com/herald-bot/herald/internal/work"
)

// open is the fast path of a panel's button. A panel with an intake
// form answers with the form — Discord takes a modal only as the first
// answer, so nothing is written: the ticket opens when it is submitted
// (openForm). Otherwise the ticket is recorded at once (record).
func (d *deps) open(ctx context.Context, in *interaction.Interaction) (*discordgo.InteractionResponse, error) {
	p, topicLabel, resp, err := d.clickedPanel(ctx, in)
	if resp != nil || err != nil {
		return resp, err
	}
	if len(p.Questions) == 0 {
		return d.record(ctx, in, p, topicLabel, nil)
	}
	// A member who could not open a ticket now hears so before typing
	// their answers; the submit checks again under their lock.
	s, err := loadSettings(ctx, in.DB(), in.GuildID)
	if errors.Is(err, errNoSettings) {
		return say(in, "not_ready", nil), nil
	}
	if err != nil {
		return nil, err
	}
	if resp, err := refusal(ctx, in.DB(), in, s); resp != nil || err != nil {
		return resp, err
	}
	return formModal(in, p)
}

// clickedPanel reads the panel and topic a button or form names, on the
// fast path's own pool; resp answers a panel or topic that is gone.
func (d *deps) clickedPanel(ctx context.Context, in *interaction.Interaction) (p *panel, topicLabel string, resp *discordgo.InteractionResponse, err error) {
	panelID, err1 := strconv.ParseInt(in.Vars["panel"], 10, 64)
	topicID, err2 := strconv.ParseInt(in.Vars["topic"], 10, 64)
	if err1 != nil || err2 != nil {
		return nil, "", say(in, "gone_panel", nil), nil
	}
	p, err = loadPanel(ctx, in.DB(), panelID)
	if errors.Is(err, errNoPanel) || err == nil && p.GuildID != in.GuildID {
		return nil, "", say(in, "gone_panel", nil), nil
	}
	if err != nil {
		return nil, "", nil, err
	}
	if topicID != 0 {
		t, ok := p.topic(topicID)
		if !ok {
			return nil, "", say(in, "gone_panel", nil), nil
		}
		topicLabel = t.Label
	}
	return p, topicLabel, nil, nil
}

// record opens a ticket. Under the member's lock — a transaction-scoped
// advisory lock, so a double click waits for the first click's commit —
// it checks the ticket being opened, the limit and the cooldown, records
// the ticket and enqueues its open job, all in one transaction: two
// clicks can never both pass the checks.
func (d *deps) record(ctx context.Context, in *interaction.Interaction, p *panel, topicLabel string, answers []answer) (*discordgo.InteractionResponse, error) {
	tx, err := in.Tx(ctx)
	if err != nil {
		return nil, err
	}
	s, err := loadSettings(ctx, tx, in.GuildID)
	if errors.Is(err, errNoSettings) {
		return say(in, "not_ready", nil), nil
	}
	if err != nil {
		return nil, err
	}
	user := in.UserID()
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, "tickets:"+in.GuildID+":"+user); err != nil {
		return nil, fmt.Errorf("tickets: member lock: %w", err)
	}
	if resp, err := refusal(ctx, tx, in, s); resp != nil || err != nil {
		return resp, err
	}
	if answers == nil {
		answers = []answer{}
	}
	userLocale, guildLocale := in.Locales()
	var id int64
	// Numbered by the open job (numberTicket): the fast path takes no
	// row another member's click needs.
	if err := tx.QueryRow(ctx, `INSERT INTO tickets (guild_id, opener_id, topic, mode, interaction_id, locale, guild_locale, answers)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`, in.GuildID, user, topicLabel, s.Mode, in.ID,
		userLocale, guildLocale, answers).Scan(&id); err != nil {
		return nil, fmt.Errorf("tickets: record ticket: %w", err)
	}
	name := ""
	if in.Member.User != nil {
		name = in.Member.User.Username
	}
	err = in.Enqueue(ctx, outbox.IntentEvent, river.InsertManyParams{
		Args:       openArgs{TicketID: id, ParentID: cmp.Or(deref(s.ChannelID), p.ChannelID), OpenerName: name},
		InsertOpts: &river.InsertOpts{Queue: string(work.Events)},
	})
	return interaction.Deferred(true), err
}

// refusal checks whether the member may open a ticket now: not while one
// is being opened, not past the limit, not within the cooldown. It
// answers why not, or nil; a delivery of an interaction whose ticket is
// recorded already is a replay.
func refusal(ctx context.Context, q querier, in *interaction.Interaction, s *settings) (*discordgo.InteractionResponse, error) {
	var st struct {
		open             int
		opening, replay  bool
		newest           *string
		cooldownLeftSecs float64
	}
	err := q.QueryRow(ctx, `SELECT count(*) FILTER (WHERE status IN ('opening', 'open')),
			COALESCE(bool_or(status = 'opening'), false), COALESCE(bool_or(interaction_id = $3), false),
			(array_agg(channel_id ORDER BY opened_at DESC) FILTER (WHERE status = 'open'))[1],
			COALESCE(EXTRACT(EPOCH FROM max(opened_at) FILTER (WHERE status <> 'failed') + make_interval(secs => $4) - now()), 0)
		FROM tickets WHERE guild_id = $1 AND opener_id = $2`, in.GuildID, in.UserID(), in.ID, s.CooldownSecs).
		Scan(&st.open, &st.opening, &st.replay, &st.newest, &st.cooldownLeftSecs)
	if err != nil {
		return nil, fmt.Errorf("tickets: member's tickets: %w", err)
	}
	switch {
	case st.replay:
		// Discord delivered this interaction again after its ticket was
		// recorded.
		return nil, interaction.ErrReplay
	case st.opening:
		return say(in, "opening_already", nil), nil
	case st.open >= s.MaxOpen:
		where := ""
		if st.newest != nil {
			where = channelMention(*st.newest)
		}
		return say(in, "limit", map[string]any{"Limit": s.MaxOpen, "Ticket": where}), nil
	case st.cooldownLeftSecs > 0:
		return say(in, "wait", map[string]any{"Seconds": int(math.Ceil(st.cooldownLeftSecs))}), nil
	}
	return nil, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
