package bulk

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/herald-bot/herald/internal/discord/rest"
	"github.com/herald-bot/herald/internal/i18n"
	"github.com/herald-bot/herald/internal/interaction/customid"
	"github.com/herald-bot/herald/internal/synctarget"
	"github.com/herald-bot/herald/internal/work"
)

// progressArgs is an action's progress message sync: it shows the
// action's tasks as they are now.
type progressArgs struct {
	ActionID int64 `json:"action_id"`
}

func (progressArgs) Kind() string { return "bulk_progress" }

// cancelID is the progress message's Cancel button.
const cancelID = "bulk:1:cancel:{action}"

type progressWorker struct {
	river.WorkerDefaults[progressArgs]
	a *Actions
}

func (w *progressWorker) Work(ctx context.Context, j *river.Job[progressArgs]) error {
	return synctarget.Run(ctx, w.a.db, j.ID, progressTarget(j.Args.ActionID), func(ctx context.Context, _ int64) error {
		return w.show(ctx, j.Args.ActionID)
	})
}

// show posts the progress message (once, by nonce) or edits it.
func (w *progressWorker) show(ctx context.Context, id int64) error {
	act, _, err := w.a.load(ctx, id)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	tasks, err := w.a.tasks(ctx, id)
	if err != nil {
		return err
	}
	content, components, err := render(act, tasks, time.Now())
	if err != nil {
		return err
	}
	none := &discordgo.MessageAllowedMentions{}
	if act.messageID != nil {
		_, err := w.a.discord.EditMessage(ctx, act.channelID, *act.messageID, rest.MessageEdit{Content: &content, Components: &components, AllowedMentions: none})
		return err
	}
	msg, err := w.a.discord.CreateMessage(ctx, act.channelID, rest.NewMessage{Content: content, Components: components,
		AllowedMentions: none, Nonce: fmt.Sprintf("bk%d", id)})
	if err != nil {
		return err
	}
	_, err = w.a.db.Exec(ctx, `UPDATE bulk_actions SET message_id = $2 WHERE id = $1`, id, msg.ID)
	return err
}

// row is a task as the progress message shows it.
type row struct {
	name, state, reason string
	until               *time.Time
}

func (a *Actions) tasks(ctx context.Context, id int64) ([]row, error) {
	rows, err := a.db.Query(ctx, `SELECT name, state, reason, until FROM bulk_tasks WHERE action_id = $1 ORDER BY seq`, id)
	if err != nil {
		return nil, fmt.Errorf("bulk: tasks: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (row, error) {
		var t row
		return t, r.Scan(&t.name, &t.state, &t.reason, &t.until)
	})
}

// sectionBudget bounds each list of names, so the message stays within
// Discord's 2,000 characters however many tasks there are.
const sectionBudget = 240

// render is the progress message: counts, then the tasks by name in each
// state, then how it ended.
func render(act *action, tasks []row, now time.Time) (string, []discordgo.MessageComponent, error) {
	loc := act.Localizer
	var done, running, failed, cancelled, todo []string
	var waiting []string
	failedBy := map[string][]string{}
	var reasons []string
	for _, t := range tasks {
		switch t.state {
		case "done":
			done = append(done, t.name)
		case "running":
			running = append(running, t.name)
		case "failed":
			failed = append(failed, t.name)
			if _, ok := failedBy[t.reason]; !ok {
				reasons = append(reasons, t.reason)
			}
			failedBy[t.reason] = append(failedBy[t.reason], t.name)
		case "cancelled":
			cancelled = append(cancelled, t.name)
		case "pending":
			if t.until != nil && t.until.After(now) {
				waiting = append(waiting, loc.T("bulk.waiting_one", map[string]any{"Name": markdown.Replace(t.name),
					"Reason": loc.T("bulk.reason."+cmp.Or(t.reason, string(work.ReasonRateLimited)), nil), "Until": t.until.Unix()}))
				continue
			}
			todo = append(todo, t.name)
		}
	}
	total := len(tasks)
	lines := []string{"**" + act.title + "**",
		loc.T("bulk.started_by", map[string]any{"User": "<@" + act.StartedBy + ">", "When": act.created.Unix()})}
	finished := act.refused != nil || (act.planned && len(running)+len(waiting)+len(todo) == 0)
	if act.planned && act.refused == nil {
		counts := []string{loc.T("bulk.count.done", map[string]any{"Done": len(done), "Total": total})}
		for _, c := range []struct {
			key string
			n   int
		}{{"running", len(running)}, {"waiting", len(waiting)}, {"failed", len(failed)}, {"left", len(todo)}, {"cancelled", len(cancelled)}} {
			if c.n > 0 {
				counts = append(counts, loc.T("bulk.count."+c.key, map[string]any{"Count": c.n}))
			}
		}
		lines = append(lines, strings.Join(counts, " · "))
	}
	section := func(key string, names []string, vars map[string]any) {
		if len(names) == 0 {
			return
		}
		if vars == nil {
			vars = map[string]any{}
		}
		vars["Count"] = len(names)
		vars["Names"] = list(loc, names)
		lines = append(lines, loc.T(key, vars))
	}
	section("bulk.section.done", done, nil)
	section("bulk.section.running", running, nil)
	lines = append(lines, waiting...)
	for _, r := range reasons {
		reason, refused := strings.CutPrefix(r, refusedReason)
		if !refused {
			reason = loc.T("bulk.reason."+cmp.Or(r, string(work.ReasonRetriesExhausted)), nil)
		}
		section("bulk.section.failed", failedBy[r], map[string]any{"Reason": reason})
	}
	section("bulk.section.cancelled", cancelled, nil)
	section("bulk.section.todo", todo, nil)
	switch {
	case !act.planned:
		lines = append(lines, loc.T("bulk.planning", nil))
	case act.refused != nil:
		lines = append(lines, loc.T("bulk.refused", map[string]any{"Reason": *act.refused}))
	case finished && act.cancelledAt != nil:
		key := "bulk.end.cancelled"
		if len(failed) > 0 {
			key = "bulk.end.cancelled_failed"
		}
		lines = append(lines, loc.T(key, map[string]any{"User": "<@" + *act.cancelledBy + ">", "Done": len(done), "Total": total,
			"Failed": len(failed), "Cancelled": len(cancelled)}))
	case finished:
		key := "bulk.end.finished"
		if len(failed) > 0 {
			key = "bulk.end.finished_failed"
		}
		lines = append(lines, loc.T(key, map[string]any{"Done": len(done), "Total": total, "Failed": len(failed)}))
	case act.cancelledAt != nil:
		lines = append(lines, loc.T("bulk.cancelling", map[string]any{"User": "<@" + *act.cancelledBy + ">"}))
	}
	content := strings.Join(lines, "\n")
	components := []discordgo.MessageComponent{}
	if !finished && act.cancelledAt == nil {
		id, err := customid.Fill(cancelID, fmt.Sprint(act.ID))
		if err != nil {
			return "", nil, err
		}
		components = append(components, discordgo.ActionsRow{Components: []discordgo.MessageComponent{
			discordgo.Button{CustomID: id, Label: loc.T("bulk.cancel_button", nil), Style: discordgo.DangerButton}}})
	}
	return content, components, nil
}

// markdown escapes what Discord would read as formatting in a name.
var markdown = strings.NewReplacer(`\`, `\\`, "*", `\*`, "_", `\_`, "~", `\~`, "|", `\|`, "`", "\\`")

// list joins names within sectionBudget, saying how many more there are.
func list(loc *i18n.Localizer, names []string) string {
	var b strings.Builder
	for i, n := range names {
		n = markdown.Replace(n)
		if b.Len()+len(n) > sectionBudget && i > 0 {
			return b.String() + loc.T("bulk.more", map[string]any{"Count": len(names) - i})
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(n)
	}
	return b.String()
}
