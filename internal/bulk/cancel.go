package bulk

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/bwmarrin/discordgo"
	"github.com/jackc/pgx/v5"

	"github.com/herald-bot/herald/internal/interaction"
)

// cancel is the Cancel button: in one transaction it marks the action
// cancelled and every pending task cancelled, so no runner takes them;
// the task being carried out finishes and nothing done is undone. The
// progress message then states the partial result.
func (a *Actions) cancel(ctx context.Context, in *interaction.Interaction) (*discordgo.InteractionResponse, error) {
	id, err := strconv.ParseInt(in.Vars["action"], 10, 64)
	if err != nil || id < 1 {
		return interaction.Ephemeral(in.Localizer.T("interaction.outdated", nil)), nil
	}
	tx, err := in.Tx(ctx)
	if err != nil {
		return nil, err
	}
	var kind string
	var over bool
	err = tx.QueryRow(ctx, `SELECT kind, cancelled_at IS NOT NULL OR finished_at IS NOT NULL FROM bulk_actions
		WHERE id = $1 AND guild_id = $2 FOR UPDATE`, id, in.GuildID).Scan(&kind, &over)
	if errors.Is(err, pgx.ErrNoRows) {
		return interaction.Ephemeral(in.Localizer.T("interaction.outdated", nil)), nil
	}
	if err != nil {
		return nil, fmt.Errorf("bulk: cancel: %w", err)
	}
	if k, ok := a.kinds[kind]; !ok || in.Member == nil || in.Member.Permissions&k.Permission != k.Permission {
		return interaction.Ephemeral(in.Localizer.T("bulk.cancel_not_allowed", nil)), nil
	}
	if over {
		return interaction.Ephemeral(in.Localizer.T("bulk.already_over", nil)), nil
	}
	if _, err := tx.Exec(ctx, `UPDATE bulk_actions SET cancelled_at = now(), cancelled_by = $2 WHERE id = $1`, id, in.UserID()); err != nil {
		return nil, fmt.Errorf("bulk: cancel: %w", err)
	}
	if _, err := tx.Exec(ctx, `UPDATE bulk_tasks SET state = 'cancelled', until = NULL, updated_at = now()
		WHERE action_id = $1 AND state = 'pending'`, id); err != nil {
		return nil, fmt.Errorf("bulk: cancel: %w", err)
	}
	revision, _, err := bump(ctx, tx, id)
	if err != nil {
		return nil, err
	}
	if err := in.RequestSync(ctx, progressTarget(id), revision, progressArgs{ActionID: id}, progressOpts()); err != nil {
		return nil, err
	}
	return interaction.DeferredUpdate(), nil
}
