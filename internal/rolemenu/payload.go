package rolemenu

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// A click's payload carries the member's roles as Discord saw them when
// the member clicked, so the apply job plans from them instead of reading
// the member again. What the payload cannot show are the changes herald
// made after Discord took it; herald keeps a short record of those
// (rolemenu_role_changes) and brings the payload up to date with them.
const (
	// payloadLag bounds how long before herald receives a click Discord
	// took its payload: a change herald finished earlier than that is in
	// it. Discord delivers interactions within seconds; a minute is ample.
	payloadLag = time.Minute
	// changeRetention is how long the record of a change is kept, well
	// past payloadLag.
	changeRetention = time.Hour
)

// roleChange is one change herald made to a member's role: present is
// the role's state after it, nil when the outcome is unknown; done is
// herald's clock once Discord answered.
type roleChange struct {
	RoleID  string
	Present *bool
	Done    time.Time
}

// fromPayload is the member's roles now, as far as herald knows without
// asking Discord: roles, from the payload of a click herald received at
// received, brought up to date with herald's own changes (oldest first).
// A change that finished after the click arrived holds whether or not
// Discord took the payload before it. ok is false when that is not known,
// and the member must be read: a click queued without payload roles, a
// change whose outcome is unknown, or one that finished before the click
// arrived although the payload shows the role the other way (Discord took
// the payload before the change, or someone undid it since).
func fromPayload(roles []string, received time.Time, changes []roleChange) (has []string, ok bool) {
	if roles == nil || received.IsZero() {
		return nil, false
	}
	set := map[string]bool{}
	for _, r := range roles {
		set[r] = true
	}
	for _, c := range changes {
		switch {
		case c.Done.Before(received.Add(-payloadLag)):
			// In the payload.
		case c.Present == nil:
			return nil, false
		case c.Done.After(received):
			set[c.RoleID] = *c.Present
		case set[c.RoleID] != *c.Present:
			return nil, false
		}
	}
	for r, on := range set {
		if on {
			has = append(has, r)
		}
	}
	slices.Sort(has)
	return has, true
}

// changesSince reads the member's recorded changes that may postdate a
// payload taken before received, oldest first.
func (w *applyWorker) changesSince(ctx context.Context, guildID, userID string, received time.Time) ([]roleChange, error) {
	rows, err := w.db.Query(ctx, `SELECT role_id, present, done_at FROM rolemenu_role_changes
		WHERE guild_id = $1 AND user_id = $2 AND done_at >= $3 ORDER BY id`, guildID, userID, received.Add(-payloadLag))
	if err != nil {
		return nil, fmt.Errorf("rolemenu: role changes: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (roleChange, error) {
		var c roleChange
		return c, r.Scan(&c.RoleID, &c.Present, &c.Done)
	})
}

// recordChanges notes changes herald made to one member's roles, and
// forgets that member's changes past changeRetention.
func recordChanges(ctx context.Context, db *pgxpool.Pool, guildID, userID string, changes map[string]roleChange) error {
	if len(changes) == 0 {
		return nil
	}
	var roles []string
	var present []*bool
	var done []time.Time
	for _, r := range slices.Sorted(maps.Keys(changes)) {
		c := changes[r]
		roles, present, done = append(roles, r), append(present, c.Present), append(done, c.Done)
	}
	_, err := db.Exec(ctx, `WITH pruned AS (
			DELETE FROM rolemenu_role_changes WHERE guild_id = $1 AND user_id = $2 AND done_at < $6)
		INSERT INTO rolemenu_role_changes (guild_id, user_id, role_id, present, done_at)
		SELECT $1::text, $2::text, * FROM unnest($3::text[], $4::boolean[], $5::timestamptz[])`,
		guildID, userID, roles, present, done, done[0].Add(-changeRetention))
	if err != nil {
		return fmt.Errorf("rolemenu: record role changes: %w", err)
	}
	return nil
}
