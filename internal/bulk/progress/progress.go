// Package progress words a bulk action's progress message: counts, the
// tasks by name in each state and how the action ended, in the action's
// language and within Discord's 2,000 characters however many tasks
// there are.
package progress

import (
	"cmp"
	"strings"
	"time"

	"github.com/herald-bot/herald/internal/i18n"
	"github.com/herald-bot/herald/internal/work"
)

// Action is what the message shows of a bulk action.
type Action struct {
	Title     string
	StartedBy string // a user ID
	Created   time.Time
	// Planned is set once the action's tasks are known.
	Planned bool
	// Refused is why the whole action was refused, if it was.
	Refused     *string
	CancelledBy *string // a user ID
	CancelledAt *time.Time
}

// Task is one task as the message shows it. State is one of pending,
// running, done, failed and cancelled; a pending task with Until in the
// future waits for Reason. A failed task's Reason is a work.Reason, which
// the message words itself, or RefusedPrefix and a kind's own words.
type Task struct {
	Name, State, Reason string
	Until               *time.Time
}

// RefusedPrefix marks a task's Reason that is a kind's refusal, stored in
// the action's language as it was written.
const RefusedPrefix = "refused:"

// sectionBudget bounds each list of names, so the message stays within
// Discord's 2,000 characters however many tasks there are.
const sectionBudget = 240

// Render is the progress message: counts, then the tasks by name in each
// state, then how it ended. open reports whether the action can still be
// cancelled, so the message should offer its Cancel button.
func Render(loc *i18n.Localizer, act Action, tasks []Task, now time.Time) (content string, open bool) {
	var done, running, failed, cancelled, todo []string
	var waiting []string
	failedBy := map[string][]string{}
	var reasons []string
	for _, t := range tasks {
		switch t.State {
		case "done":
			done = append(done, t.Name)
		case "running":
			running = append(running, t.Name)
		case "failed":
			failed = append(failed, t.Name)
			if _, ok := failedBy[t.Reason]; !ok {
				reasons = append(reasons, t.Reason)
			}
			failedBy[t.Reason] = append(failedBy[t.Reason], t.Name)
		case "cancelled":
			cancelled = append(cancelled, t.Name)
		case "pending":
			if t.Until != nil && t.Until.After(now) {
				waiting = append(waiting, loc.T("bulk.waiting_one", map[string]any{"Name": markdown.Replace(t.Name),
					"Reason": loc.T("bulk.reason."+cmp.Or(t.Reason, string(work.ReasonRateLimited)), nil), "Until": t.Until.Unix()}))
				continue
			}
			todo = append(todo, t.Name)
		}
	}
	total := len(tasks)
	lines := []string{"**" + act.Title + "**",
		loc.T("bulk.started_by", map[string]any{"User": "<@" + act.StartedBy + ">", "When": act.Created.Unix()})}
	finished := act.Refused != nil || (act.Planned && len(running)+len(waiting)+len(todo) == 0)
	if act.Planned && act.Refused == nil {
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
		reason, refused := strings.CutPrefix(r, RefusedPrefix)
		if !refused {
			reason = loc.T("bulk.reason."+cmp.Or(r, string(work.ReasonRetriesExhausted)), nil)
		}
		section("bulk.section.failed", failedBy[r], map[string]any{"Reason": reason})
	}
	section("bulk.section.cancelled", cancelled, nil)
	section("bulk.section.todo", todo, nil)
	switch {
	case !act.Planned:
		lines = append(lines, loc.T("bulk.planning", nil))
	case act.Refused != nil:
		lines = append(lines, loc.T("bulk.refused", map[string]any{"Reason": *act.Refused}))
	case finished && act.CancelledAt != nil:
		key := "bulk.end.cancelled"
		if len(failed) > 0 {
			key = "bulk.end.cancelled_failed"
		}
		lines = append(lines, loc.T(key, map[string]any{"User": "<@" + *act.CancelledBy + ">", "Done": len(done), "Total": total,
			"Failed": len(failed), "Cancelled": len(cancelled)}))
	case finished:
		key := "bulk.end.finished"
		if len(failed) > 0 {
			key = "bulk.end.finished_failed"
		}
		lines = append(lines, loc.T(key, map[string]any{"Done": len(done), "Total": total, "Failed": len(failed)}))
	case act.CancelledAt != nil:
		lines = append(lines, loc.T("bulk.cancelling", map[string]any{"User": "<@" + *act.CancelledBy + ">"}))
	}
	return strings.Join(lines, "\n"), !finished && act.CancelledAt == nil
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
