package bulk

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/herald-bot/herald/internal/bulk/progress"
	"github.com/herald-bot/herald/internal/discord/rest"
	"github.com/herald-bot/herald/internal/interaction/customid"
	"github.com/herald-bot/herald/internal/synctarget"
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
	content, open := progress.Render(act.Localizer, act.view(), tasks, time.Now())
	components := []discordgo.MessageComponent{}
	if open {
		id, err := customid.Fill(cancelID, fmt.Sprint(act.ID))
		if err != nil {
			return err
		}
		components = append(components, discordgo.ActionsRow{Components: []discordgo.MessageComponent{
			discordgo.Button{CustomID: id, Label: act.Localizer.T("bulk.cancel_button", nil), Style: discordgo.DangerButton}}})
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

func (a *Actions) tasks(ctx context.Context, id int64) ([]progress.Task, error) {
	rows, err := a.db.Query(ctx, `SELECT name, state, reason, until FROM bulk_tasks WHERE action_id = $1 ORDER BY seq`, id)
	if err != nil {
		return nil, fmt.Errorf("bulk: tasks: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (progress.Task, error) {
		var t progress.Task
		return t, r.Scan(&t.Name, &t.State, &t.Reason, &t.Until)
	})
}
