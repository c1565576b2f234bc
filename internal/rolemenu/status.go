package rolemenu

import (
	"context"
	"fmt"
	"strings"

	"github.com/bwmarrin/discordgo"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/herald-bot/herald/internal/followup"
	"github.com/herald-bot/herald/internal/i18n"
	"github.com/herald-bot/herald/internal/interaction"
	"github.com/herald-bot/herald/internal/work"
)

// statusArgs is /rolemenu status: a view, useless after the interaction's
// token expires.
type statusArgs struct {
	work.View
	GuildID       string `json:"guild_id"`
	InteractionID string `json:"interaction_id"`
	Locale        string `json:"locale"`
	GuildLocale   string `json:"guild_locale"`
}

func (statusArgs) Kind() string { return "rolemenu_status" }

func (d *deps) status(ctx context.Context, in *interaction.Interaction) (*discordgo.InteractionResponse, error) {
	userLocale, guildLocale := in.Locales()
	err := in.Enqueue(ctx, work.IntentView, river.InsertManyParams{
		Args: statusArgs{View: work.ReplyView(in.Received), GuildID: in.GuildID, InteractionID: in.ID,
			Locale: userLocale, GuildLocale: guildLocale},
		InsertOpts: &river.InsertOpts{Queue: string(work.Interactive)},
	})
	return interaction.Deferred(true), err
}

type statusWorker struct {
	river.WorkerDefaults[statusArgs]
	*deps
}

// menuStatus is one menu's line: what is saved, what Discord shows, and
// the job between them.
type menuStatus struct {
	name, state, detail string
	channelID           *string
	saved, visible      int64
	job                 *int64
	roles               []string
}

func (w *statusWorker) Work(ctx context.Context, j *river.Job[statusArgs]) error {
	a := j.Args
	loc := w.catalog.For(a.Locale, a.GuildLocale)
	rows, err := w.db.Query(ctx, `SELECT m.name, m.state, m.state_detail, m.channel_id, m.revision,
			COALESCE(t.published_revision, 0), COALESCE(t.running_job_id, t.pending_job_id),
			ARRAY(SELECT role_id FROM rolemenu_options o WHERE o.menu_id = m.id)
		FROM rolemenus m LEFT JOIN sync_targets t ON t.target = 'rolemenu:' || m.id
		WHERE m.guild_id = $1 ORDER BY m.name`, a.GuildID)
	if err != nil {
		return fmt.Errorf("rolemenu: status: %w", err)
	}
	menus, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (menuStatus, error) {
		var s menuStatus
		err := r.Scan(&s.name, &s.state, &s.detail, &s.channelID, &s.saved, &s.visible, &s.job, &s.roles)
		return s, err
	})
	if err != nil {
		return fmt.Errorf("rolemenu: status: %w", err)
	}
	text := loc.T("rolemenu.none", nil)
	if len(menus) > 0 {
		snap, err := w.roles.Get(ctx, a.GuildID)
		if err != nil {
			return err
		}
		lines := []string{loc.T("rolemenu.status.title", nil)}
		client := river.ClientFromContext[pgx.Tx](ctx)
		for _, m := range menus {
			state, err := w.describe(ctx, client, loc, m)
			if err != nil {
				return err
			}
			lines = append(lines, loc.T("rolemenu.status.line", map[string]any{"Name": m.name, "Saved": m.saved, "Visible": m.visible, "State": state}))
			for _, r := range m.roles {
				if snap.Roles[r] == nil {
					lines = append(lines, "  "+loc.T("rolemenu.status.role_deleted", map[string]any{"Role": roleMention(r)}))
				}
			}
		}
		text = strings.Join(lines, "\n")
	}
	_, err = w.followups.Send(ctx, followup.Update{Lane: work.Interactive, InteractionID: a.InteractionID, Key: followup.JobKey(j.ID), Content: text})
	return err
}

// describe names a menu's state: published, draft, pending, waiting until
// when and why, or failed with the reason and the fix.
func (w *statusWorker) describe(ctx context.Context, client *work.Client, loc *i18n.Localizer, m menuStatus) (string, error) {
	vars := map[string]any{"Name": m.name}
	switch {
	case m.state == "draft":
		return loc.T("rolemenu.status.draft", nil), nil
	case m.state == "target_missing" && m.detail == "channel":
		return loc.T("rolemenu.status.missing_channel", vars), nil
	case m.state == "target_missing":
		return loc.T("rolemenu.status.missing_message", vars), nil
	}
	if m.job != nil {
		st, err := work.JobState(ctx, client, *m.job)
		if err != nil {
			return "", fmt.Errorf("rolemenu: status of job %d: %w", *m.job, err)
		}
		switch st.Name {
		case "waiting":
			return loc.T("rolemenu.status.waiting", map[string]any{"Until": fmt.Sprintf("<t:%d:T>", st.Until.Unix())}), nil
		case "failed":
			return w.failed(loc, m, st), nil
		case "queued", "running":
			return loc.T("rolemenu.status.pending", nil), nil
		}
	}
	if m.saved > m.visible {
		return loc.T("rolemenu.status.pending", nil), nil
	}
	return loc.T("rolemenu.status.published", nil), nil
}

func (w *statusWorker) failed(loc *i18n.Localizer, m menuStatus, st work.State) string {
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
