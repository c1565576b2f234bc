package tickets

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/herald-bot/herald/internal/i18n"
	"github.com/herald-bot/herald/internal/synctarget"
	"github.com/herald-bot/herald/internal/work"
)

// report is the tickets' part of /herald status: the panels not shown as
// saved — deleted, waiting for Discord, failed or still being published —
// each with what to do.
func (d *deps) report(ctx context.Context, guildID string, loc *i18n.Localizer) ([]string, error) {
	rows, err := d.db.Query(ctx, `SELECT id, title, channel_id, state, revision FROM ticket_panels WHERE guild_id = $1 ORDER BY id`, guildID)
	if err != nil {
		return nil, fmt.Errorf("tickets: report: %w", err)
	}
	type panel struct {
		id               int64
		title, channelID string
		state            PanelState
		saved, visible   int64
		job              *int64
	}
	panels, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (panel, error) {
		var p panel
		return p, r.Scan(&p.id, &p.title, &p.channelID, &p.state, &p.saved)
	})
	if err != nil {
		return nil, fmt.Errorf("tickets: report: %w", err)
	}
	synced, err := synctarget.Status(ctx, d.db, panels, func(p panel) string { return panelTarget(p.id) })
	if err != nil {
		return nil, fmt.Errorf("tickets: report: %w", err)
	}
	client := river.ClientFromContext[pgx.Tx](ctx)
	var lines []string
	for i, p := range panels {
		p.visible, p.job = synced[i].Published, synced[i].Job
		if p.state == PanelActive && p.saved <= p.visible {
			continue // shown as saved
		}
		vars := map[string]any{"Title": p.title, "Channel": "<#" + p.channelID + ">", "Saved": p.saved, "Visible": p.visible}
		state := loc.T("tickets.panel_status.pending", nil)
		switch {
		case p.state == PanelTargetMissing:
			state = loc.T("tickets.panel_status.missing", nil)
		case p.job != nil:
			st, err := work.JobState(ctx, client, *p.job)
			if err != nil {
				return nil, fmt.Errorf("tickets: report: job %d: %w", *p.job, err)
			}
			switch st.Name {
			case "waiting":
				state = loc.T("tickets.panel_status.waiting", map[string]any{"Until": fmt.Sprintf("<t:%d:R>", st.Until.Unix())})
			case "failed":
				state = loc.T("tickets.panel_status.failed", map[string]any{"Reason": loc.T("job.reason."+string(st.Reason),
					map[string]any{"Permission": "Send Messages", "Where": "<#" + p.channelID + ">"})})
			}
		}
		vars["State"] = state
		lines = append(lines, loc.T("tickets.panel_status.panel", vars))
	}
	return lines, nil
}
