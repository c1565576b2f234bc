package rolemenu

import (
	"context"
	"errors"

	"github.com/bwmarrin/discordgo"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/herald-bot/herald/internal/bulk"
	"github.com/herald-bot/herald/internal/interaction"
	"github.com/herald-bot/herald/internal/synctarget"
	"github.com/herald-bot/herald/internal/work"
)

// kindPublishAll is /rolemenu publish-all's bulk action.
const kindPublishAll = "rolemenu_publish_all"

// publishAll is /rolemenu publish-all: every published menu of the guild
// brought to its saved configuration, one after the other, as a bulk
// action with progress and Cancel.
func (d *deps) publishAll(ctx context.Context, in *interaction.Interaction) (*discordgo.InteractionResponse, error) {
	return d.bulk.Start(ctx, in, kindPublishAll, "rolemenu.publish_all.title", nil, struct{}{})
}

// planPublishAll lists the guild's published menus that have roles.
func (d *deps) planPublishAll(ctx context.Context, a bulk.Action) ([]bulk.Task, error) {
	rows, err := d.db.Query(ctx, `SELECT name FROM rolemenus m WHERE guild_id = $1 AND channel_id IS NOT NULL
		AND EXISTS (SELECT 1 FROM rolemenu_options o WHERE o.menu_id = m.id) ORDER BY name`, a.GuildID)
	if err != nil {
		return nil, err
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, &bulk.Refused{Text: a.Localizer.T("rolemenu.publish_all.none", nil)}
	}
	tasks := make([]bulk.Task, len(names))
	for i, n := range names {
		tasks[i] = bulk.Task{Key: n, Name: n}
	}
	return tasks, nil
}

// requestRepublish asks for one menu's saved configuration to be shown:
// a menu whose message was deleted gets a new one, a menu already shown
// as saved costs no call.
func (d *deps) requestRepublish(ctx context.Context, tx pgx.Tx, a bulk.Action, t bulk.Task) (string, int64, error) {
	m, err := lockMenu(ctx, tx, a.GuildID, t.Key)
	if errors.Is(err, errNoMenu) {
		return "", 0, bulk.ErrGone
	}
	if err != nil {
		return "", 0, err
	}
	if m.ChannelID == nil || len(m.Options) == 0 {
		return "", 0, bulk.ErrGone
	}
	if m.State == StateActive {
		if shown, err := synctarget.Visible(ctx, tx, m.target(), m.Revision); err != nil || shown {
			return m.target(), m.Revision, err
		}
	} else {
		if err := revive(ctx, tx, m); err != nil {
			return "", 0, err
		}
		if err := bump(ctx, tx, m); err != nil {
			return "", 0, err
		}
	}
	_, _, err = synctarget.Request(ctx, tx, river.ClientFromContext[pgx.Tx](ctx), m.target(), m.Revision, publishArgs{MenuID: m.ID},
		work.ForGuild(publishOpts(), a.GuildID))
	return m.target(), m.Revision, err
}
