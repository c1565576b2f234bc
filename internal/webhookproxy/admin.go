package webhookproxy

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/herald-bot/herald/internal/webhookproxy/execute"
)

// admin guards an operations endpoint with the admin key. Without a key
// configured they all answer 403: dead letters hold message bodies.
func (p *proxy) admin(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !p.isAdmin(r) {
			writeError(w, execute.ErrMissingAccess)
			return
		}
		h(w, r)
	}
}

func (p *proxy) isAdmin(r *http.Request) bool {
	key, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	want := p.set.adminKey.Reveal()
	return ok && want != "" && subtle.ConstantTimeCompare([]byte(key), []byte(want)) == 1
}

// deliveryStatus is one delivery as the operations endpoints show it: the
// webhook by id and token fingerprint, never its token.
type deliveryStatus struct {
	ID         string          `json:"id"`
	State      string          `json:"state"`
	WebhookID  string          `json:"webhook_id"`
	ThreadID   string          `json:"thread_id,omitempty"`
	Variant    string          `json:"variant,omitempty"`
	TokenFP    string          `json:"token_fingerprint"`
	Service    string          `json:"service,omitempty"`
	Attempts   int             `json:"attempts"`
	AcceptedAt time.Time       `json:"accepted_at"`
	FinishedAt *time.Time      `json:"finished_at,omitempty"`
	FailStatus int             `json:"fail_status,omitempty"`
	Reason     string          `json:"reason,omitempty"`
	Message    json.RawMessage `json:"message,omitempty"`
}

const statusColumns = `id::text, state, webhook_id, thread_id, variant, token_fp, service, attempts, accepted_at, finished_at,
	coalesce(fail_status, 0), coalesce(reason, ''), message`

func scanStatus(row pgx.Row) (deliveryStatus, error) {
	var s deliveryStatus
	err := row.Scan(&s.ID, &s.State, &s.WebhookID, &s.ThreadID, &s.Variant, &s.TokenFP, &s.Service, &s.Attempts, &s.AcceptedAt, &s.FinishedAt,
		&s.FailStatus, &s.Reason, &s.Message)
	return s, err
}

func (p *proxy) status(ctx context.Context, id int64) (deliveryStatus, error) {
	return scanStatus(p.db.QueryRow(ctx, `SELECT `+statusColumns+` FROM webhookproxy_deliveries WHERE id = $1`, id))
}

// getDelivery shows one delivery to the admin, and to the service that
// sent it when service keys are configured: the id a 202 answered is
// theirs to follow.
func (p *proxy) getDelivery(w http.ResponseWriter, r *http.Request) {
	admin := p.isAdmin(r)
	service, isService := "", false
	if !admin && len(p.set.keys) > 0 {
		service, isService = p.service(r)
	}
	if !admin && !isService {
		writeError(w, execute.ErrMissingAccess)
		return
	}
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		writeError(w, &execute.Error{Status: http.StatusNotFound, Message: "Unknown delivery"})
		return
	}
	st, err := p.status(r.Context(), id)
	switch {
	case errors.Is(err, pgx.ErrNoRows), err == nil && !admin && st.Service != service:
		writeError(w, &execute.Error{Status: http.StatusNotFound, Message: "Unknown delivery"})
	case err != nil:
		p.unavailable(w, r, err)
	default:
		writeJSON(w, http.StatusOK, st)
	}
}

// targetStatus is one queue: its depth, how old its oldest pending
// delivery is, and whether it waits (rate limited, backing off) or its
// webhook is dead.
type targetStatus struct {
	WebhookID     string     `json:"webhook_id"`
	ChannelID     string     `json:"channel_id,omitempty"`
	ThreadID      string     `json:"thread_id,omitempty"`
	Depth         int        `json:"depth"`
	OldestPending *time.Time `json:"oldest_pending,omitempty"`
	WaitingUntil  *time.Time `json:"waiting_until,omitempty"`
	WaitReason    string     `json:"wait_reason,omitempty"`
	LastError     string     `json:"last_error,omitempty"`
	Dead          bool       `json:"dead"`
	DeadReason    string     `json:"dead_reason,omitempty"`
}

// targets lists the queues, of the webhooks posting in guildID when it
// is not empty.
func targets(ctx context.Context, q querier, guildID string) ([]targetStatus, error) {
	rows, err := q.Query(ctx, `SELECT t.webhook_id, t.thread_id, t.depth,
			(SELECT min(accepted_at) FROM webhookproxy_deliveries d WHERE d.target = t.target AND d.state = 'pending'),
			CASE WHEN t.wait_until > now() THEN t.wait_until END, coalesce(t.wait_reason, ''), coalesce(t.last_error, ''),
			h.dead_at IS NOT NULL, coalesce(h.dead_reason, ''), coalesce(h.channel_id, '')
		FROM webhookproxy_targets t LEFT JOIN webhookproxy_webhooks h USING (webhook_id)
		WHERE $1 = '' OR h.guild_id = $1
		ORDER BY t.depth DESC, t.target LIMIT 1000`, guildID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (targetStatus, error) {
		var t targetStatus
		err := row.Scan(&t.WebhookID, &t.ThreadID, &t.Depth, &t.OldestPending, &t.WaitingUntil, &t.WaitReason, &t.LastError, &t.Dead, &t.DeadReason, &t.ChannelID)
		return t, err
	})
}

// querier is what reads need of a pool or a transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

func (p *proxy) getTargets(w http.ResponseWriter, r *http.Request) {
	ts, err := targets(r.Context(), p.db, "")
	if err != nil {
		p.unavailable(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"targets": ts})
}

// deadFilter narrows the dead-letter endpoints: ?id= one delivery,
// ?webhook_id= one webhook's, neither: all.
func deadFilter(r *http.Request) (id int64, webhookID string, ok bool) {
	q := r.URL.Query()
	if v := q.Get("id"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, "", false
		}
		id = n
	}
	webhookID = q.Get("webhook_id")
	return id, webhookID, webhookID == "" || snowflake(webhookID)
}

const deadWhere = `state = 'dead' AND ($1 = 0 OR id = $1) AND ($2 = '' OR webhook_id = $2)`

func (p *proxy) listDead(w http.ResponseWriter, r *http.Request) {
	id, hook, ok := deadFilter(r)
	if !ok {
		writeError(w, &execute.Error{Status: http.StatusBadRequest, Message: "Invalid filter"})
		return
	}
	rows, err := p.db.Query(r.Context(), `SELECT `+statusColumns+` FROM webhookproxy_deliveries
		WHERE `+deadWhere+` ORDER BY id LIMIT 1000`, id, hook)
	var list []deliveryStatus
	if err == nil {
		list, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (deliveryStatus, error) { return scanStatus(row) })
	}
	if err != nil {
		p.unavailable(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"dead": list})
}

// replayDead queues dead letters again with fresh attempts, under their
// ids, so they keep their place in acceptance order: next in their
// targets' queues. Those of a webhook Discord deleted stay dead: it will
// not come back.
func (p *proxy) replayDead(w http.ResponseWriter, r *http.Request) {
	id, hook, ok := deadFilter(r)
	if !ok {
		writeError(w, &execute.Error{Status: http.StatusBadRequest, Message: "Invalid filter"})
		return
	}
	var n int
	// Targets are locked before the deliveries change, as accepting does,
	// so the usage counters the change updates are always locked after.
	const replayable = deadWhere + ` AND body IS NOT NULL
		AND NOT EXISTS (SELECT 1 FROM webhookproxy_webhooks h WHERE h.webhook_id = d.webhook_id AND h.dead_at IS NOT NULL)`
	err := pgx.BeginFunc(r.Context(), p.db, func(tx pgx.Tx) error {
		rows, err := tx.Query(r.Context(), `SELECT DISTINCT target FROM webhookproxy_deliveries d WHERE `+replayable, id, hook)
		if err != nil {
			return err
		}
		names, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil || len(names) == 0 {
			return err
		}
		locked, err := lockTargets(r.Context(), tx, names)
		if err != nil {
			return err
		}
		rows, err = tx.Query(r.Context(), `UPDATE webhookproxy_deliveries d SET state = 'pending', attempts = 0, unknown = false,
				reason = NULL, fail_status = NULL, finished_at = NULL, attempted_at = NULL
			WHERE `+replayable+` RETURNING target`, id, hook)
		if err != nil {
			return err
		}
		replayed, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		n = len(replayed)
		added := map[string]int{}
		for _, t := range replayed {
			added[t]++
		}
		return startDrains(r.Context(), tx, p.accept.jobs, added, locked)
	})
	if err != nil {
		p.unavailable(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"replayed": n})
}

func (p *proxy) purgeDead(w http.ResponseWriter, r *http.Request) {
	id, hook, ok := deadFilter(r)
	if !ok {
		writeError(w, &execute.Error{Status: http.StatusBadRequest, Message: "Invalid filter"})
		return
	}
	tag, err := p.db.Exec(r.Context(), `DELETE FROM webhookproxy_deliveries WHERE `+deadWhere, id, hook)
	if err != nil {
		p.unavailable(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"purged": tag.RowsAffected()})
}

func (p *proxy) unavailable(w http.ResponseWriter, r *http.Request, err error) {
	p.log.WarnContext(r.Context(), "proxy status unavailable", "err", err)
	writeError(w, &execute.Error{Status: http.StatusServiceUnavailable, Message: "The proxy's database is unavailable.", RetryAfter: unavailableRetryAfter})
}
