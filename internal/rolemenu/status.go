package rolemenu

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/herald-bot/herald/internal/i18n"
	"github.com/herald-bot/herald/internal/synctarget"
	"github.com/herald-bot/herald/internal/work"
)

// statusView is /rolemenu status (followup.View).
type statusView struct{}

func (statusView) Kind() string { return "rolemenu_status" }

// menuStatus is one menu's line: what is saved, what Discord shows, and
// the job between them.
type menuStatus struct {
	id             int64
	name, detail   string
	state          State
	channelID      *string
	saved, visible int64
	job            *int64
	roles          []string // of its options
}

// statusText is /rolemenu status: every menu of the guild.
func (d *deps) statusText(ctx context.Context, guildID string, loc *i18n.Localizer) (string, error) {
	lines, err := d.menuLines(ctx, guildID, loc, false)
	if err != nil || len(lines) == 0 {
		return loc.T("rolemenu.none", nil), err
	}
	late, err := d.lateLine(ctx, guildID, loc)
	if err != nil {
		return "", err
	}
	return strings.Join(append(append([]string{loc.T("rolemenu.status.title", nil)}, lines...), late...), "\n"), nil
}

// report is the role menus' part of /herald status: the menus that are
// not published as saved, their deleted roles, and the members told their
// change comes late.
func (d *deps) report(ctx context.Context, guildID string, loc *i18n.Localizer) ([]string, error) {
	lines, err := d.menuLines(ctx, guildID, loc, true)
	if err != nil {
		return nil, err
	}
	late, err := d.lateLine(ctx, guildID, loc)
	return append(lines, late...), err
}

// lateLine says how many members wait for a change that comes after their
// reply closes, each told when to expect it (notice.go); none when none
// do. The count moves only when notices are given, not with every click,
// so a status board is not repainted through a rush.
func (d *deps) lateLine(ctx context.Context, guildID string, loc *i18n.Localizer) ([]string, error) {
	var told int
	if err := d.db.QueryRow(ctx, `SELECT count(DISTINCT user_id) FROM rolemenu_clicks WHERE guild_id = $1 AND notice = $2`,
		guildID, noticeGiven).Scan(&told); err != nil {
		return nil, fmt.Errorf("rolemenu: late clicks: %w", err)
	}
	if told == 0 {
		return nil, nil
	}
	return []string{loc.T("rolemenu.status.late_waiting", map[string]any{"Told": told})}, nil
}

// menuLines describes the guild's menus, a line each with their deleted
// roles below; troubled only, the menus that are not published as saved.
func (d *deps) menuLines(ctx context.Context, guildID string, loc *i18n.Localizer, troubled bool) ([]string, error) {
	rows, err := d.db.Query(ctx, `SELECT m.id, m.name, m.state, m.state_detail, m.channel_id, m.revision,
			ARRAY(SELECT role_id FROM rolemenu_options o WHERE o.menu_id = m.id)
		FROM rolemenus m WHERE m.guild_id = $1 ORDER BY m.name`, guildID)
	if err != nil {
		return nil, fmt.Errorf("rolemenu: status: %w", err)
	}
	menus, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (menuStatus, error) {
		var s menuStatus
		err := r.Scan(&s.id, &s.name, &s.state, &s.detail, &s.channelID, &s.saved, &s.roles)
		return s, err
	})
	if err != nil || len(menus) == 0 {
		return nil, err
	}
	synced, err := synctarget.Status(ctx, d.db, menus, func(m menuStatus) string { return menuTarget(m.id) })
	if err != nil {
		return nil, fmt.Errorf("rolemenu: status: %w", err)
	}
	for i, s := range synced {
		menus[i].visible, menus[i].job = s.Published, s.Job
	}
	snap, err := d.roles.Get(ctx, guildID)
	if err != nil {
		return nil, err
	}
	var lines []string
	client := river.ClientFromContext[pgx.Tx](ctx)
	for _, m := range menus {
		state, fine, err := d.describe(ctx, client, loc, m)
		if err != nil {
			return nil, err
		}
		var deleted []string
		for _, r := range m.roles {
			if snap.Roles[r] == nil {
				deleted = append(deleted, "  "+loc.T("rolemenu.status.role_deleted", map[string]any{"Role": roleMention(r)}))
			}
		}
		if troubled && fine && len(deleted) == 0 {
			continue
		}
		lines = append(lines, loc.T("rolemenu.status.line", map[string]any{"Name": m.name, "Saved": m.saved, "Visible": m.visible, "State": state}))
		lines = append(lines, deleted...)
	}
	return lines, nil
}

// describe names a menu's state — published, draft, not publishable,
// pending, waiting until when and why, or failed with the reason and the
// fix — and whether it is as it should be (published, or a draft).
func (d *deps) describe(ctx context.Context, client *work.Client, loc *i18n.Localizer, m menuStatus) (string, bool, error) {
	vars := map[string]any{"Name": m.name}
	switch {
	case m.state == StateDraft:
		return loc.T("rolemenu.status.draft", nil), true, nil
	case len(m.roles) == 0:
		// publish sends nothing for it: the message shows the last
		// revision that had options.
		return loc.T("rolemenu.status.no_options", vars), false, nil
	case m.state == StateTargetMissing && m.detail == "channel":
		return loc.T("rolemenu.status.missing_channel", vars), false, nil
	case m.state == StateTargetMissing:
		return loc.T("rolemenu.status.missing_message", vars), false, nil
	}
	if m.job != nil {
		st, err := work.JobState(ctx, client, *m.job)
		if err != nil {
			return "", false, fmt.Errorf("rolemenu: status of job %d: %w", *m.job, err)
		}
		switch st.Name {
		case "waiting":
			return loc.T("rolemenu.status.waiting", map[string]any{"Until": fmt.Sprintf("<t:%d:T>", st.Until.Unix())}), false, nil
		case "failed":
			return failed(loc, m, st), false, nil
		case "queued", "running":
			return loc.T("rolemenu.status.pending", nil), false, nil
		}
	}
	if m.saved > m.visible {
		return loc.T("rolemenu.status.pending", nil), false, nil
	}
	return loc.T("rolemenu.status.published", nil), true, nil
}

func failed(loc *i18n.Localizer, m menuStatus, st work.State) string {
	where := ""
	if m.channelID != nil {
		where = channelMention(*m.channelID)
	}
	reason := loc.T("job.reason."+string(st.Reason), map[string]any{"Permission": "Send Messages", "Where": where})
	fix := loc.T("rolemenu.status.fix_other", map[string]any{"Name": m.name})
	if st.Reason == work.ReasonNeedsPermission {
		fix = loc.T("rolemenu.status.fix_permission", map[string]any{"Name": m.name})
	}
	return loc.T("rolemenu.status.failed", map[string]any{"Reason": reason, "Fix": fix})
}
