package webhookproxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/herald-bot/herald/internal/discord/rest"
	"github.com/herald-bot/herald/internal/discord/transport"
	"github.com/herald-bot/herald/internal/webhookproxy/execute"
	"github.com/herald-bot/herald/internal/work"
)

// drainArgs is the job that delivers one target's queue in order. A
// target has at most one (webhookproxy_targets.job_id), so a slow or
// rate-limited target holds one worker at most — none while it snoozes —
// and never delays another target's deliveries.
type drainArgs struct {
	Target string `json:"target"`
}

func (drainArgs) Kind() string { return "webhookproxy_drain" }

func (drainArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: string(work.Events), MaxAttempts: drainAttempts}
}

const (
	// drainAttempts bounds River's own retries, which only database
	// errors use: Discord's answers are handled here and snooze.
	drainAttempts = 25
	// drainBudget is how long one run delivers before it hands its worker
	// to other targets' jobs and queues again.
	drainBudget = 20 * time.Second
	// maxAttempts is how often one delivery is tried against 5xx and
	// network errors before it is dead-lettered.
	maxAttempts = 20
	backoffBase = time.Second
	backoffCap  = 5 * time.Minute
)

type drainer struct {
	river.WorkerDefaults[drainArgs]
	db      *pgxpool.Pool
	discord *rest.Client
	tokens  *verifier
	// bodies bounds the large bodies held by drains at once; smaller
	// ones come with the head of the queue.
	bodies  *bytePool
	metrics *metrics
	waiters *waiters
	log     *slog.Logger
	// readBack says the application has the Message Content intent, which
	// reconciling a lost answer needs.
	readBack bool
}

// pending is the head of a target's queue.
type pending struct {
	id                                                               int64
	webhookID, token, threadID, variant, event, contentType, service string
	// channel is where the webhook posts, if herald heard of no change
	// since it learned it ("" unknown).
	channel                 string
	body                    []byte
	size                    int64
	attempts                int
	unknown, dead           bool
	acceptedAt, attemptedAt time.Time
}

// Work delivers the target's deliveries one after another, oldest first.
// Before each send the delivery is marked as possibly sent, so a crash
// or a lost answer leads to reconciliation, not a blind resend.
func (w *drainer) Work(ctx context.Context, j *river.Job[drainArgs]) error {
	target := j.Args.Target
	stop := time.Now().Add(drainBudget)
	for {
		if ctx.Err() != nil {
			// Stopping: come back soon, in this or another process.
			return river.JobSnooze(time.Second)
		}
		d, ok, err := w.head(ctx, target, j.ID)
		if err != nil {
			return err
		}
		if !ok {
			released, err := w.release(ctx, target, j.ID)
			if err != nil || released {
				return err
			}
			continue
		}
		if time.Now().After(stop) {
			return river.JobSnooze(0)
		}
		wait, err := w.attempt(ctx, target, d)
		if err != nil {
			return err
		}
		if wait > 0 {
			return river.JobSnooze(wait)
		}
	}
}

// bodyInline is the largest body the head of a queue brings along; a
// larger one is read once the drains' byte pool holds room for it.
const bodyInline = 1 << 20

// attempt verifies d's token, holds its body, and delivers it.
func (w *drainer) attempt(ctx context.Context, target string, d pending) (time.Duration, error) {
	if wait, err := w.verify(ctx, target, d); err != nil || wait != 0 {
		return wait, err
	}
	if d.size > bodyInline {
		if !w.bodies.take(d.service, d.size) {
			return time.Second, w.wait(ctx, target, d, time.Second, "memory", false)
		}
		defer w.bodies.give(d.service, d.size)
		if err := w.db.QueryRow(ctx, `SELECT body FROM webhookproxy_deliveries WHERE id = $1`, d.id).Scan(&d.body); err != nil {
			return 0, fmt.Errorf("webhookproxy: read body: %w", err)
		}
	}
	return w.deliver(ctx, target, d)
}

// verify asks Discord once about a token no caller's request verified
// (it was down when the request came): a bad one is dead-lettered
// without a send; while it cannot be asked, the target waits. A negative
// wait means d was finished here.
func (w *drainer) verify(ctx context.Context, target string, d pending) (time.Duration, error) {
	if d.dead {
		return -1, w.fail(ctx, d, "dead", 404, `{"code": 10015, "message": "Unknown Webhook"}`)
	}
	got, err := w.tokens.check(ctx, d.service, d.webhookID, d.token)
	var over *overBudget
	switch {
	case errors.As(err, &over):
		// Its caller spent its share on bad tokens: its unverified post
		// must not hold the queue it shares with others.
		return -1, w.fail(ctx, d, "over_budget", http.StatusTooManyRequests, `{"code": 0, "message": "The caller's invalid-request budget is spent; the token was never verified."}`)
	case errors.Is(err, errVerifyBusy) || (err == nil && got == unverified):
		return verifyRetry, w.wait(ctx, target, d, verifyRetry, "unverified", false)
	case err != nil:
		return 0, err
	case got != valid:
		r := got.refusal()
		body, _ := json.Marshal(r)
		return -1, w.fail(ctx, d, "invalid_token", r.Status, string(body))
	}
	return 0, nil
}

// verifyRetry is how long a target whose token could not be verified
// waits before its drain asks again.
const verifyRetry = 5 * time.Second

// head is the oldest pending delivery of the target, while jobID drains
// it. A job River runs again after its process died may find the target
// drained and handed to another job meanwhile: it gets nothing, so two
// jobs never send one target's deliveries.
func (w *drainer) head(ctx context.Context, target string, jobID int64) (pending, bool, error) {
	var d pending
	var attempted *time.Time
	err := w.db.QueryRow(ctx, `SELECT d.id, d.webhook_id, d.token, d.thread_id, d.variant, d.event, d.content_type, d.service,
			CASE WHEN octet_length(d.body) <= $3 THEN d.body END, octet_length(d.body),
			d.attempts, d.unknown, h.dead_at IS NOT NULL, d.accepted_at, d.attempted_at, CASE WHEN h.channel_current THEN h.channel_id ELSE '' END
		FROM webhookproxy_targets t
		JOIN LATERAL (SELECT * FROM webhookproxy_deliveries WHERE target = t.target AND state = 'pending' ORDER BY id LIMIT 1) d ON true
		LEFT JOIN webhookproxy_webhooks h ON h.webhook_id = d.webhook_id
		WHERE t.target = $1 AND t.job_id = $2`, target, jobID, bodyInline).
		Scan(&d.id, &d.webhookID, &d.token, &d.threadID, &d.variant, &d.event, &d.contentType, &d.service, &d.body, &d.size,
			&d.attempts, &d.unknown, &d.dead, &d.acceptedAt, &attempted, &d.channel)
	if errors.Is(err, pgx.ErrNoRows) {
		return d, false, nil
	}
	if attempted != nil {
		d.attemptedAt = *attempted
	}
	if err != nil {
		return d, false, fmt.Errorf("webhookproxy: next delivery: %w", err)
	}
	return d, true, nil
}

// release ends the target's job when its queue is empty, or when the
// target has another job. The target row is locked first, so a delivery
// accepted meanwhile is either seen here (and delivered by this job) or
// finds no job and starts one.
func (w *drainer) release(ctx context.Context, target string, jobID int64) (bool, error) {
	released := false
	err := pgx.BeginFunc(ctx, w.db, func(tx pgx.Tx) error {
		var owner *int64
		if err := tx.QueryRow(ctx, `SELECT job_id FROM webhookproxy_targets WHERE target = $1 FOR UPDATE`, target).Scan(&owner); err != nil {
			return err
		}
		if owner == nil || *owner != jobID {
			released = true
			return nil
		}
		// A new statement sees what committed before the lock was granted.
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM webhookproxy_deliveries WHERE target = $1 AND state = 'pending'`, target).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return nil
		}
		released = true
		_, err := tx.Exec(ctx, `UPDATE webhookproxy_targets SET depth = 0, wait_until = NULL, wait_reason = NULL, job_id = NULL
			WHERE target = $1`, target)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("webhookproxy: release %s: %w", target, err)
	}
	return released, nil
}

// deliver makes one attempt at d and records its outcome. A positive
// wait means the target must wait that long before its next attempt.
func (w *drainer) deliver(ctx context.Context, target string, d pending) (time.Duration, error) {
	if d.unknown {
		msg, found, err := w.reconcile(ctx, d)
		switch {
		case found:
			w.metrics.reconciled.WithLabelValues("found").Inc()
			return 0, w.delivered(ctx, d, msg)
		case err != nil:
			// Nothing can tell whether it was sent: sending again risks
			// a duplicate, not sending risks a loss; a notification
			// proxy prefers the duplicate.
			w.metrics.reconciled.WithLabelValues("unknowable").Inc()
			w.log.WarnContext(ctx, "webhook delivery resent after an unknown outcome", "delivery", d.id, "webhook", d.webhookID, "err", err)
		default:
			w.metrics.reconciled.WithLabelValues("absent").Inc()
		}
	}
	if _, err := w.db.Exec(ctx, `UPDATE webhookproxy_deliveries SET attempts = attempts + 1, attempted_at = now(), unknown = true
		WHERE id = $1`, d.id); err != nil {
		return 0, fmt.Errorf("webhookproxy: mark attempt: %w", err)
	}
	d.attempts++
	msg, err := w.discord.RelayWebhook(ctx, rest.RelayedExecute{WebhookID: d.webhookID, Token: d.token, Variant: d.variant, GitHubEvent: d.event,
		ThreadID: d.threadID, ContentType: d.contentType, Body: d.body})
	if err == nil {
		return 0, w.delivered(ctx, d, msg)
	}
	return w.failed(ctx, target, d, err)
}

// failed decides what an error means for d, as seed 004 says: 429 waits
// exactly as long as Discord asked, 5xx and network errors back off, any
// other 4xx stops at once, and Unknown Webhook stops the webhook for good.
func (w *drainer) failed(ctx context.Context, target string, d pending, err error) (time.Duration, error) {
	if ctx.Err() != nil {
		// Stopped mid-send: whether it went out is unknown; the next run
		// reconciles.
		return time.Second, nil
	}
	class, wait := transport.Classify(err)
	var api *transport.APIError
	errors.As(err, &api)
	switch {
	case api != nil && api.Code == execute.ErrUnknownWebhook.Code:
		if _, err := w.db.Exec(ctx, `INSERT INTO webhookproxy_webhooks (webhook_id, dead_at, dead_reason)
			VALUES ($1, now(), 'Unknown Webhook') ON CONFLICT (webhook_id) DO UPDATE SET dead_at = now(), dead_reason = EXCLUDED.dead_reason`,
			d.webhookID); err != nil {
			return 0, fmt.Errorf("webhookproxy: mark webhook dead: %w", err)
		}
		w.log.WarnContext(ctx, "webhook is gone: its deliveries are dead-lettered", "webhook", d.webhookID)
		return 0, w.fail(ctx, d, "dead", api.Status, apiBody(api))
	case api != nil && api.Code == execute.ErrInvalidToken.Code:
		// The token was reset since it was verified: callers still using
		// it are refused at the door from now on.
		if err := w.tokens.forget(ctx, d.webhookID, d.token); err != nil {
			return 0, err
		}
		return 0, w.fail(ctx, d, "invalid_token", api.Status, apiBody(api))
	case class == transport.RateLimited:
		w.metrics.retried.WithLabelValues("rate_limited").Inc()
		return wait, w.wait(ctx, target, d, wait, "rate_limited", false)
	case class == transport.Transient || class == transport.UnknownOutcome || class == transport.Unauthorized:
		// A rejected bot token stops all of herald's REST until an
		// operator acts; the webhook itself is not at fault.
		unknown := class == transport.UnknownOutcome
		if d.attempts >= maxAttempts {
			return 0, w.fail(ctx, d, "retries_exhausted", 0, err.Error())
		}
		w.metrics.retried.WithLabelValues(string(class)).Inc()
		wait = max(wait, backoff(d.attempts))
		return wait, w.wait(ctx, target, d, wait, string(class), unknown)
	case api != nil:
		return 0, w.fail(ctx, d, string(class), api.Status, apiBody(api))
	default:
		return 0, w.fail(ctx, d, string(class), 0, err.Error())
	}
}

// backoff is exponential in the attempts made, with jitter so targets
// failing together do not retry together.
func backoff(attempts int) time.Duration {
	d := backoffCap
	if attempts < 20 {
		d = min(backoffCap, backoffBase<<(attempts-1))
	}
	return d/2 + rand.N(d/2+1)
}

// apiBody is Discord's error as it answered it, for the dead letter and a
// caller waiting with ?wait=true.
func apiBody(e *transport.APIError) string {
	b, _ := json.Marshal(map[string]any{"code": e.Code, "message": e.Message, "errors": e.Errors})
	return string(b)
}

func (w *drainer) delivered(ctx context.Context, d pending, msg json.RawMessage) error {
	ctx = context.WithoutCancel(ctx)
	_, err := w.db.Exec(ctx, `WITH done AS (
			UPDATE webhookproxy_deliveries SET state = 'delivered', unknown = false, finished_at = now(), message = $2, reason = NULL
			WHERE id = $1 AND state = 'pending' RETURNING target)
		UPDATE webhookproxy_targets t SET depth = greatest(t.depth - 1, 0), wait_until = NULL, wait_reason = NULL, last_error = NULL
		FROM done WHERE t.target = done.target`, d.id, msg)
	if err != nil {
		return fmt.Errorf("webhookproxy: record delivery: %w", err)
	}
	w.metrics.delivered.Inc()
	w.metrics.latency.Observe(time.Since(d.acceptedAt).Seconds())
	w.waiters.notify(d.id)
	return nil
}

// fail dead-letters d with Discord's answer (or the error) as the reason.
func (w *drainer) fail(ctx context.Context, d pending, class string, status int, reason string) error {
	ctx = context.WithoutCancel(ctx)
	_, err := w.db.Exec(ctx, `WITH done AS (
			UPDATE webhookproxy_deliveries SET state = 'dead', unknown = false, finished_at = now(), fail_status = $2, reason = $3
			WHERE id = $1 AND state = 'pending' RETURNING target)
		UPDATE webhookproxy_targets t SET depth = greatest(t.depth - 1, 0), wait_until = NULL, wait_reason = NULL, last_error = $4
		FROM done WHERE t.target = done.target`, d.id, status, reason, class)
	if err != nil {
		return fmt.Errorf("webhookproxy: dead-letter: %w", err)
	}
	w.metrics.deadLettered.WithLabelValues(class).Inc()
	w.log.InfoContext(ctx, "webhook delivery dead-lettered", "delivery", d.id, "webhook", d.webhookID, "class", class, "status", status)
	w.waiters.notify(d.id)
	return nil
}

// wait records that the target waits, and whether d's last attempt may
// have been applied.
func (w *drainer) wait(ctx context.Context, target string, d pending, wait time.Duration, reason string, unknown bool) error {
	ctx = context.WithoutCancel(ctx)
	_, err := w.db.Exec(ctx, `WITH d AS (UPDATE webhookproxy_deliveries SET unknown = $2 WHERE id = $1)
		UPDATE webhookproxy_targets SET wait_until = now() + make_interval(secs => $4), wait_reason = $5, last_error = $5
		WHERE target = $3`, d.id, unknown, target, wait.Seconds(), reason)
	if err != nil {
		return fmt.Errorf("webhookproxy: record wait: %w", err)
	}
	return nil
}
