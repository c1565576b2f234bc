package rolemenu

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/herald-bot/herald/internal/discord/transport"
	"github.com/herald-bot/herald/internal/work"
)

// expireArgs removes a temporary role when it is due. The job is durable
// and scheduled, so it survives restarts; a later grant moves the due
// time, and a job that finds its grant not yet due does nothing.
type expireArgs struct {
	GuildID string `json:"guild_id"`
	UserID  string `json:"user_id"`
	RoleID  string `json:"role_id"`
}

func (expireArgs) Kind() string { return "rolemenu_expire" }

// scheduleExpiry records the grants in tx and schedules their removal.
func scheduleExpiry(ctx context.Context, tx pgx.Tx, guildID, userID string, expires map[string]time.Time) error {
	if len(expires) == 0 {
		return nil
	}
	client := river.ClientFromContext[pgx.Tx](ctx)
	for roleID, at := range expires {
		if _, err := tx.Exec(ctx, `INSERT INTO rolemenu_grants (guild_id, user_id, role_id, expires_at) VALUES ($1, $2, $3, $4)
			ON CONFLICT (guild_id, user_id, role_id) DO UPDATE SET expires_at = EXCLUDED.expires_at`, guildID, userID, roleID, at); err != nil {
			return fmt.Errorf("rolemenu: grant: %w", err)
		}
		if _, err := client.InsertTx(ctx, tx, expireArgs{GuildID: guildID, UserID: userID, RoleID: roleID},
			work.ForGuild(&river.InsertOpts{Queue: string(work.Events), ScheduledAt: at}, guildID)); err != nil {
			return fmt.Errorf("rolemenu: schedule expiry: %w", err)
		}
	}
	return nil
}

type expireWorker struct {
	river.WorkerDefaults[expireArgs]
	*deps
}

func (w *expireWorker) Work(ctx context.Context, j *river.Job[expireArgs]) error {
	a := j.Args
	var due time.Time
	err := w.db.QueryRow(ctx, `SELECT expires_at FROM rolemenu_grants WHERE guild_id = $1 AND user_id = $2 AND role_id = $3`,
		a.GuildID, a.UserID, a.RoleID).Scan(&due)
	if errors.Is(err, pgx.ErrNoRows) || err == nil && due.After(w.clock.Now()) {
		return nil // removed already, or granted again since: a later job removes it
	}
	if err != nil {
		return fmt.Errorf("rolemenu: grant: %w", err)
	}
	g, err := w.snapshot(ctx, a.GuildID)
	if err != nil {
		return err
	}
	// A role that became unmanageable is left alone; the grant is kept so
	// the admin can see it in the database, and the job ends.
	if why := g.checkRole(a.RoleID, "", nil); why != nil && why.Key != "dangerous" {
		return river.JobCancel(fmt.Errorf("%s: temporary role %s: %s", work.ReasonInvalid, a.RoleID, why.Key))
	}
	err = w.discord.RemoveMemberRole(ctx, a.GuildID, a.UserID, a.RoleID, "temporary role from a role menu expired")
	var api *transport.APIError
	if err != nil && !(errors.As(err, &api) && api.Class() == transport.NotFound) {
		return err
	}
	// Clicks whose payload Discord took before the removal must not see
	// the role (fromPayload).
	gone := false
	if err := recordChanges(ctx, w.db, a.GuildID, a.UserID, map[string]roleChange{a.RoleID: {Present: &gone, Done: time.Now()}}); err != nil {
		return err
	}
	_, err = w.db.Exec(ctx, `DELETE FROM rolemenu_grants WHERE guild_id = $1 AND user_id = $2 AND role_id = $3 AND expires_at = $4`,
		a.GuildID, a.UserID, a.RoleID, due)
	return err
}
