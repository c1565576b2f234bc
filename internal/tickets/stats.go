package tickets

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/herald-bot/herald/internal/i18n"
)

// statsView is /tickets stats (followup.View).
type statsView struct{}

func (statsView) Kind() string { return "tickets_stats" }

// staffLine is one member of staff on the leaderboard: the tickets they
// claimed or first answered.
type staffLine struct {
	user                 string
	handled, closed      int
	response, resolution *float64 // medians in seconds
}

// statsText is /tickets stats: the guild's counts and medians, and its
// staff's leaderboard.
func (d *deps) statsText(ctx context.Context, guildID string, loc *i18n.Localizer) (string, error) {
	var opened, open, closed int
	var response, resolution *float64
	err := d.db.QueryRow(ctx, `SELECT count(*) FILTER (WHERE status <> 'failed'), count(*) FILTER (WHERE status = 'open'),
			count(*) FILTER (WHERE status = 'closed'),
			percentile_cont(0.5) WITHIN GROUP (ORDER BY EXTRACT(EPOCH FROM first_response_at - opened_at)),
			percentile_cont(0.5) WITHIN GROUP (ORDER BY EXTRACT(EPOCH FROM closed_at - opened_at))
		FROM tickets WHERE guild_id = $1`, guildID).Scan(&opened, &open, &closed, &response, &resolution)
	if err != nil {
		return "", fmt.Errorf("tickets: stats: %w", err)
	}
	rows, err := d.db.Query(ctx, `SELECT COALESCE(claimed_by, first_responder) AS staff, count(*), count(*) FILTER (WHERE status = 'closed'),
			percentile_cont(0.5) WITHIN GROUP (ORDER BY EXTRACT(EPOCH FROM first_response_at - opened_at)),
			percentile_cont(0.5) WITHIN GROUP (ORDER BY EXTRACT(EPOCH FROM closed_at - opened_at))
		FROM tickets WHERE guild_id = $1 AND COALESCE(claimed_by, first_responder) IS NOT NULL
		GROUP BY staff ORDER BY count(*) DESC, staff LIMIT 10`, guildID)
	if err != nil {
		return "", fmt.Errorf("tickets: stats: %w", err)
	}
	board, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (staffLine, error) {
		var l staffLine
		return l, r.Scan(&l.user, &l.handled, &l.closed, &l.response, &l.resolution)
	})
	if err != nil {
		return "", fmt.Errorf("tickets: stats: %w", err)
	}
	lines := []string{loc.T("tickets.stats_summary", map[string]any{"Opened": opened, "Open": open, "Closed": closed,
		"Response": median(loc, response), "Resolution": median(loc, resolution)})}
	for i, l := range board {
		lines = append(lines, loc.T("tickets.stats_line", map[string]any{"Rank": i + 1, "Member": userMention(l.user),
			"Handled": l.handled, "Closed": l.closed, "Response": median(loc, l.response), "Resolution": median(loc, l.resolution)}))
	}
	return strings.Join(lines, "\n"), nil
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
