package outbox

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
)

// Intent is what a job means (DESIGN.md): sync brings an object to its
// newest revision, event publishes one piece of information, view renders
// something someone may look at.
type Intent string

const (
	IntentSync  Intent = "sync"
	IntentEvent Intent = "event"
	IntentView  Intent = "view"
)

// Key is an idempotency key, <event>:<route_version>:<intent>: the same
// interaction handled by the same route version with the same meaning is
// the same work, however often Discord delivers it.
type Key struct {
	Event        string // the interaction (or other event) id
	RouteVersion int
	Intent       Intent
}

func (k Key) String() string {
	return k.Event + ":" + strconv.Itoa(k.RouteVersion) + ":" + string(k.Intent)
}

// Entry is one row of the ledger: the key, and the interaction's token,
// which follow-ups read from here rather than from job args, where River
// would keep (and River UI show) it long after Discord's 15 minutes. The
// housekeeping job forgets tokens once they expire.
type Entry struct {
	Key   Key
	Token string
}

// Record writes e in the ledger in tx. A key already recorded reports
// inserted=false; a concurrent transaction recording the same key makes
// this one wait for its outcome first.
func Record(ctx context.Context, tx pgx.Tx, e Entry) (inserted bool, err error) {
	tag, err := tx.Exec(ctx, `INSERT INTO interaction_ledger (idempotency_key, event_id, token) VALUES ($1, $2, NULLIF($3, ''))
		ON CONFLICT DO NOTHING`, e.Key.String(), e.Key.Event, e.Token)
	if err != nil {
		return false, fmt.Errorf("outbox: ledger %s: %w", e.Key, err)
	}
	return tag.RowsAffected() == 1, nil
}

// ErrTokenExpired means an interaction's token is no longer known or has
// outlived what Discord accepts (15 minutes, work.TokenLife).
var ErrTokenExpired = errors.New("outbox: the interaction's token has expired")

// Token reads the token of interaction eventID from the ledger, if it was
// recorded less than life ago.
func Token(ctx context.Context, db Querier, eventID string, life time.Duration) (string, error) {
	var token string
	err := db.QueryRow(ctx, `SELECT token FROM interaction_ledger WHERE event_id = $1 AND token IS NOT NULL
		AND created_at > now() - make_interval(secs => $2) LIMIT 1`, eventID, life.Seconds()).Scan(&token)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", ErrTokenExpired
	}
	if err != nil {
		return "", fmt.Errorf("outbox: token of %s: %w", eventID, err)
	}
	return token, nil
}

// Recorded reports whether any key of the event is in the ledger: the
// event was handled before, whatever its route version or intent.
func Recorded(ctx context.Context, db Querier, eventID string) (bool, error) {
	var found bool
	if err := db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM interaction_ledger WHERE event_id = $1)`, eventID).Scan(&found); err != nil {
		return false, fmt.Errorf("outbox: ledger %s: %w", eventID, err)
	}
	return found, nil
}

// Settle decides a write of key whose outcome is unknown — its statement
// or COMMIT lost in a timeout or a restart — for good: if the work is
// recorded, landed is true; if not, key is recorded as refused, so that
// a write still in flight finds it taken and lands nothing after the
// caller answered "busy". A transaction still holding key makes Settle
// wait for its outcome.
func Settle(ctx context.Context, db Querier, key Key) (landed bool, err error) {
	var refused bool
	err = db.QueryRow(ctx, `INSERT INTO interaction_ledger (idempotency_key, event_id, refused) VALUES ($1, $2, true)
		ON CONFLICT (idempotency_key) DO UPDATE SET refused = interaction_ledger.refused
		RETURNING refused`, key.String(), key.Event).Scan(&refused)
	if err != nil {
		return false, fmt.Errorf("outbox: settle %s: %w", key, err)
	}
	return !refused, nil
}

// Querier reads one row: a pool, a connection or a transaction.
type Querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}
