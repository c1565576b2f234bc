package rolemenu

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/herald-bot/herald/internal/gateway"
)

// With the Server Members intent the gateway sends a member's roles
// whenever they change (GUILD_MEMBER_UPDATE). Discord documents no order
// between that event and a click's, so an update says nothing about a
// click it may have crossed; one received more than payloadLag after the
// click was taken after it, and serves in place of a read when the
// click's payload cannot say what the member has (fromPayload). Updates
// are kept only for members with clicks waiting, and go with their last
// click.

// onMember keeps m's roles when the member has clicks waiting and m is
// the newest update herald has of them. It locks the clicks it found, so
// that their apply job, deleting them, deletes this too (answer).
func (d *deps) onMember(m gateway.Member) {
	ctx, cancel := context.WithTimeout(context.Background(), eventTimeout)
	defer cancel()
	received := time.Now().Add(-m.Age) // the clock of the clicks' received_at
	roles := m.Roles
	if roles == nil {
		roles = []string{}
	}
	_, err := d.db.Exec(ctx, `INSERT INTO rolemenu_members_seen AS s (guild_id, user_id, roles, received_at)
		SELECT $1, $2, $3, $4 WHERE EXISTS (SELECT 1 FROM rolemenu_clicks WHERE guild_id = $1 AND user_id = $2 FOR KEY SHARE)
		ON CONFLICT (guild_id, user_id) DO UPDATE SET roles = excluded.roles, received_at = excluded.received_at
		WHERE s.received_at < excluded.received_at`, m.GuildID, m.UserID, roles, received)
	if err != nil {
		d.log.Warn("keeping a member's roles from the gateway failed; the apply job reads the member if it needs them", "err", err)
	}
}

// seenRoles are the member's roles now from the newest gateway update,
// when one came payloadLag after the click received at after was and
// herald's own changes since it are certain (fromPayload).
func (w *applyWorker) seenRoles(ctx context.Context, guildID, userID string, after time.Time) ([]string, bool, error) {
	var roles []string
	var received time.Time
	err := w.db.QueryRow(ctx, `SELECT roles, received_at FROM rolemenu_members_seen
		WHERE guild_id = $1 AND user_id = $2 AND received_at > $3`, guildID, userID, after.Add(payloadLag)).Scan(&roles, &received)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("rolemenu: member seen: %w", err)
	}
	changes, err := w.changesSince(ctx, guildID, userID, received)
	if err != nil {
		return nil, false, err
	}
	has, ok := fromPayload(roles, received, changes)
	return has, ok, nil
}
