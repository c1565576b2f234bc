package bulk

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/herald-bot/herald/internal/bulk/progress"
	"github.com/herald-bot/herald/internal/synctarget"
	"github.com/herald-bot/herald/internal/work"
)

// action is an action's row.
type action struct {
	Action
	kind                     string
	title, locale, channelID string
	messageID                *string
	planned                  bool
	refused                  *string
	cancelledBy              *string
	cancelledAt, finishedAt  *time.Time
	created                  time.Time
	revision                 int64
}

// view is what the progress message shows of act.
func (act *action) view() progress.Action {
	return progress.Action{Title: act.title, StartedBy: act.StartedBy, Created: act.created, Planned: act.planned,
		Refused: act.refused, CancelledBy: act.cancelledBy, CancelledAt: act.cancelledAt}
}

// load reads an action and its kind.
func (a *Actions) load(ctx context.Context, id int64) (*action, Kind, error) {
	var r action
	err := a.db.QueryRow(ctx, `SELECT id, guild_id, kind, params, title, locale, channel_id, message_id, started_by, planned, refused,
		cancelled_by, cancelled_at, finished_at, created_at, revision FROM bulk_actions WHERE id = $1`, id).
		Scan(&r.ID, &r.GuildID, &r.kind, &r.Params, &r.title, &r.locale, &r.channelID, &r.messageID, &r.StartedBy, &r.planned, &r.refused,
			&r.cancelledBy, &r.cancelledAt, &r.finishedAt, &r.created, &r.revision)
	if err != nil {
		return nil, Kind{}, err
	}
	k, ok := a.kinds[r.kind]
	if !ok {
		return nil, Kind{}, fmt.Errorf("bulk: action %d has kind %q, which this herald does not know", id, r.kind)
	}
	r.Localizer = a.catalog.For("", r.locale)
	return &r, k, nil
}

// inTx runs fn and, in the same transaction, asks for the action's
// progress message to show the change.
func (a *Actions) inTx(ctx context.Context, id int64, fn func(tx pgx.Tx) error) error {
	tx, err := a.db.Begin(ctx)
	if err != nil {
		return fmt.Errorf("bulk: begin: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if err := fn(tx); err != nil {
		return err
	}
	if err := requestProgress(ctx, tx, river.ClientFromContext[pgx.Tx](ctx), id); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// change runs one statement and asks for the progress message to show it.
func (a *Actions) change(ctx context.Context, id int64, sql string, args ...any) error {
	return a.inTx(ctx, id, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, sql, args...); err != nil {
			return fmt.Errorf("bulk: %w", err)
		}
		return nil
	})
}

// finish ends a running task as done or failed.
func (a *Actions) finish(ctx context.Context, id int64, seq int, state string, reason work.Reason) error {
	return a.change(ctx, id, `UPDATE bulk_tasks SET state = $3, reason = $4, until = NULL, updated_at = now()
		WHERE action_id = $1 AND seq = $2 AND state = 'running'`, id, seq, state, string(reason))
}

// failRest fails the action's running task and every pending one with
// reason.
func (a *Actions) failRest(ctx context.Context, id int64, reason string) error {
	return a.change(ctx, id, `UPDATE bulk_tasks SET state = 'failed', reason = $2, until = NULL, updated_at = now()
		WHERE action_id = $1 AND state IN ('pending', 'running')`, id, reason)
}

// requestProgress bumps the action's revision and asks for its progress
// message to show it; requests within progressEvery fold into one edit.
func requestProgress(ctx context.Context, tx pgx.Tx, c *work.Client, id int64) error {
	revision, guildID, err := bump(ctx, tx, id)
	if err != nil {
		return err
	}
	opts := progressOpts()
	opts.ScheduledAt = time.Now().Add(progressEvery)
	_, _, err = synctarget.Request(ctx, tx, c, progressTarget(id), revision, progressArgs{ActionID: id}, work.ForGuild(opts, guildID))
	return err
}

// bump numbers a change of the action, for its progress message's sync.
func bump(ctx context.Context, tx pgx.Tx, id int64) (revision int64, guildID string, err error) {
	err = tx.QueryRow(ctx, `UPDATE bulk_actions SET revision = revision + 1 WHERE id = $1 RETURNING revision, guild_id`, id).Scan(&revision, &guildID)
	if err != nil {
		return 0, "", fmt.Errorf("bulk: progress: %w", err)
	}
	return revision, guildID, nil
}

// progressEvery is the least time between two edits of a progress
// message: changes within it fold into one.
const progressEvery = time.Second

func progressTarget(id int64) string { return "bulk:" + strconv.FormatInt(id, 10) }

func progressOpts() *river.InsertOpts { return &river.InsertOpts{Queue: string(work.Sync)} }
