package tickets

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/herald-bot/herald/internal/followup"
	"github.com/herald-bot/herald/internal/i18n"
	"github.com/herald-bot/herald/internal/interaction"
	"github.com/herald-bot/herald/internal/work"
)

// statsArgs is /tickets stats: a view, useless once the interaction's
// token expires.
type statsArgs struct {
	work.View
	GuildID       string `json:"guild_id"`
	InteractionID string `json:"interaction_id"`
	Locale        string `json:"locale"`
	GuildLocale   string `json:"guild_locale"`
}

func (statsArgs) Kind() string { return "tickets_stats" }

func (d *deps) stats(ctx context.Context, in *interaction.Interaction) (*discordgo.InteractionResponse, error) {
	userLocale, guildLocale := in.Locales()
	err := in.Enqueue(ctx, work.IntentView, river.InsertManyParams{
		Args: statsArgs{View: work.ReplyView(in.Received), GuildID: in.GuildID, InteractionID: in.ID,
			Locale: userLocale, GuildLocale: guildLocale},
		InsertOpts: &river.InsertOpts{Queue: string(work.Interactive)},
	})
	return interaction.Deferred(true), err
}

type statsWorker struct {
	river.WorkerDefaults[statsArgs]
	*deps
}

// staffLine is one member of staff on the leaderboard: the tickets they
// claimed or first answered.
type staffLine struct {
	user                 string
	handled, closed      int
	response, resolution *float64 // medians in seconds
}

func (w *statsWorker) Work(ctx context.Context, j *river.Job[statsArgs]) error {
	a := j.Args
	loc := w.catalog.For(a.Locale, a.GuildLocale)
	var opened, open, closed int
	var response, resolution *float64
	err := w.db.QueryRow(ctx, `SELECT count(*) FILTER (WHERE status <> 'failed'), count(*) FILTER (WHERE status = 'open'),
			count(*) FILTER (WHERE status = 'closed'),
			percentile_cont(0.5) WITHIN GROUP (ORDER BY EXTRACT(EPOCH FROM first_response_at - opened_at)),
			percentile_cont(0.5) WITHIN GROUP (ORDER BY EXTRACT(EPOCH FROM closed_at - opened_at))
		FROM tickets WHERE guild_id = $1`, a.GuildID).Scan(&opened, &open, &closed, &response, &resolution)
	if err != nil {
		return fmt.Errorf("tickets: stats: %w", err)
	}
	rows, err := w.db.Query(ctx, `SELECT COALESCE(claimed_by, first_responder) AS staff, count(*), count(*) FILTER (WHERE status = 'closed'),
			percentile_cont(0.5) WITHIN GROUP (ORDER BY EXTRACT(EPOCH FROM first_response_at - opened_at)),
			percentile_cont(0.5) WITHIN GROUP (ORDER BY EXTRACT(EPOCH FROM closed_at - opened_at))
		FROM tickets WHERE guild_id = $1 AND COALESCE(claimed_by, first_responder) IS NOT NULL
		GROUP BY staff ORDER BY count(*) DESC, staff LIMIT 10`, a.GuildID)
	if err != nil {
		return fmt.Errorf("tickets: stats: %w", err)
	}
	board, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (staffLine, error) {
		var l staffLine
		return l, r.Scan(&l.user, &l.handled, &l.closed, &l.response, &l.resolution)
	})
	if err != nil {
		return fmt.Errorf("tickets: stats: %w", err)
	}
	lines := []string{loc.T("tickets.stats_summary", map[string]any{"Opened": opened, "Open": open, "Closed": closed,
		"Response": median(loc, response), "Resolution": median(loc, resolution)})}
	for i, l := range board {
		lines = append(lines, loc.T("tickets.stats_line", map[string]any{"Rank": i + 1, "Member": userMention(l.user),
			"Handled": l.handled, "Closed": l.closed, "Response": median(loc, l.response), "Resolution": median(loc, l.resolution)}))
	}
	_, err = w.followups.Send(ctx, followup.Update{Lane: work.Interactive, InteractionID: a.InteractionID, Key: followup.JobKey(j.ID),
		Content: strings.Join(lines, "\n")})
	return err
}

// median writes a median duration, or a dash when there is none yet.
func median(loc *i18n.Localizer, secs *float64) string {
	if secs == nil {
		return loc.T("tickets.stats_none", nil)
	}
	d := time.Duration(*secs * float64(time.Second)).Round(time.Second)
	switch {
	case d >= time.Hour:
		return d.Truncate(time.Minute).String()
	default:
		return d.String()
	}
}
