package tickets

import (
	"context"
	"errors"
	"strconv"

	"github.com/bwmarrin/discordgo"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/herald-bot/herald/internal/bulk"
	"github.com/herald-bot/herald/internal/interaction"
	"github.com/herald-bot/herald/internal/synctarget"
	"github.com/herald-bot/herald/internal/work"
)

// kindPanelsRepublish is /tickets panels republish's bulk action.
const kindPanelsRepublish = "tickets_panels_republish"

// panelsRepublish is /tickets panels republish: every panel of the guild
// shown as saved again — a deleted one posted anew — one after the
// other, as a bulk action with progress and Cancel.
func (d *deps) panelsRepublish(ctx context.Context, in *interaction.Interaction) (*discordgo.InteractionResponse, error) {
	return d.bulk.Start(ctx, in, kindPanelsRepublish, "tickets.panels_republish.title", nil, struct{}{})
}

func (d *deps) planPanels(ctx context.Context, a bulk.Action) ([]bulk.Task, error) {
	rows, err := d.db.Query(ctx, `SELECT id, title, channel_id FROM ticket_panels WHERE guild_id = $1 ORDER BY id`, a.GuildID)
	if err != nil {
		return nil, err
	}
	var tasks []bulk.Task
	for rows.Next() {
		var id int64
		var title, channel string
		if err := rows.Scan(&id, &title, &channel); err != nil {
			return nil, err
		}
		tasks = append(tasks, bulk.Task{Key: strconv.FormatInt(id, 10), Name: title + " (<#" + channel + ">)"})
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(tasks) == 0 {
		return nil, &bulk.Refused{Text: a.Localizer.T("tickets.panels_republish.none", nil)}
	}
	return tasks, nil
}

// requestPanel asks for one panel to be shown as saved: a panel whose
// message was deleted is made active again and posted anew (its new
// revision names a new nonce); one already shown costs no call.
func (d *deps) requestPanel(ctx context.Context, tx pgx.Tx, a bulk.Action, t bulk.Task) (string, int64, error) {
	id, err := strconv.ParseInt(t.Key, 10, 64)
	if err != nil {
		return "", 0, bulk.ErrGone
	}
	var state PanelState
	var revision int64
	err = tx.QueryRow(ctx, `SELECT state, revision FROM ticket_panels WHERE id = $1 AND guild_id = $2 FOR UPDATE`, id, a.GuildID).Scan(&state, &revision)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", 0, bulk.ErrGone
	}
	if err != nil {
		return "", 0, err
	}
	target := panelTarget(id)
	if state == PanelActive {
		if shown, err := synctarget.Visible(ctx, tx, target, revision); err != nil || shown {
			return target, revision, err
		}
	} else if err := tx.QueryRow(ctx, `UPDATE ticket_panels SET state = 'active', message_id = NULL, revision = revision + 1
		WHERE id = $1 RETURNING revision`, id).Scan(&revision); err != nil {
		return "", 0, err
	}
	_, _, err = synctarget.Request(ctx, tx, river.ClientFromContext[pgx.Tx](ctx), target, revision, panelArgs{PanelID: id},
		work.ForGuild(publishOpts(), a.GuildID))
	return target, revision, err
}
