// Package followup sends what an interaction's work has to tell the
// member, exactly once and within the interaction's message budget
// (seed 001): the first update fills the deferred reply (@original) with
// an idempotent edit, later ones become follow-up messages up to Max per
// interaction, updates closer together than Window merge into the last
// message, and past the budget updates merge or drop by the lane's policy
// — every merge and drop counted.
//
// Exactly once: every update carries a key (stable across a job's
// retries); the plan for it is recorded before anything is sent, so a
// retried job repeats only idempotent edits. A follow-up create — which
// Discord cannot deduplicate — is marked as sending first; if its answer
// is lost, or the process dies, the content is merged into the last
// message by an edit instead of being posted again.
//
// Interactions answered with a deferred update (a component's type 6)
// have no reply of their own; features answer members there with a
// deferred message (interaction.Deferred).
package followup

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/riverqueue/river"

	"github.com/herald-bot/herald/internal/discord/rest"
	"github.com/herald-bot/herald/internal/discord/transport"
	"github.com/herald-bot/herald/internal/outbox"
	"github.com/herald-bot/herald/internal/work"
)

// Policy is what happens to an update beyond the budget.
type Policy string

const (
	Merge Policy = "merge" // appended to the interaction's last message
	Drop  Policy = "drop"  // not sent, counted
)

// Budget limits the messages one interaction may cause, its reply
// included.
type Budget struct {
	Max    int           // max_messages_per_interaction
	Window time.Duration // coalesce_window: closer updates merge
	// Policies per lane; a lane without one merges. The events lane always
	// merges: an event is never dropped.
	Policies map[work.Lane]Policy
	// TokenLife is how long Discord accepts the interaction's token
	// (zero: work.TokenLife; shorter against a scaled simulator): past it
	// an update is not sent.
	TokenLife time.Duration
}

// Sender delivers updates through herald's REST client.
type Sender struct {
	db      *pgxpool.Pool
	discord *rest.Client
	budget  Budget
	count   *prometheus.CounterVec
	// interactions counts interactions with at least one message, so
	// messages per interaction is herald_followup_messages_total{outcome="sent"}
	// over it.
	interactions prometheus.Counter
}

// NewSender builds a Sender and registers its counters.
func NewSender(db *pgxpool.Pool, discord *rest.Client, b Budget, reg prometheus.Registerer) *Sender {
	if b.TokenLife <= 0 {
		b.TokenLife = work.TokenLife
	}
	s := &Sender{db: db, discord: discord, budget: b,
		count: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "herald_followup_messages_total",
			Help: "Updates to members by lane and what became of them (sent, merged, dropped, reconciled).",
		}, []string{"lane", "outcome"}),
		interactions: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "herald_followup_interactions_total",
			Help: "Interactions that sent at least one message; messages per interaction = sent updates / this.",
		})}
	if reg != nil {
		reg.MustRegister(s.count, s.interactions)
	}
	return s
}

// Result says what became of one update.
type Result string

const (
	Sent    Result = "sent"    // a message of its own (the reply, or a follow-up)
	Merged  Result = "merged"  // appended to the last message
	Dropped Result = "dropped" // beyond the budget, by policy
	// Reconciled: a follow-up create whose answer was lost, merged into
	// the last message instead of being posted again.
	Reconciled Result = "reconciled"
)

// Update is one thing to tell the member.
type Update struct {
	Lane          work.Lane
	InteractionID string
	// Key identifies the update across retries: a job's id, with a suffix
	// when one job sends several.
	Key     string
	Content string
}

// JobKey is the key of the only update a job sends.
func JobKey(jobID int64) string { return fmt.Sprintf("job-%d", jobID) }

// Send delivers u, or merges or drops it as the budget says. It is called
// from jobs (ctx carries the lane's priority) and is safe to call again
// with the same key after any failure.
func (s *Sender) Send(ctx context.Context, u Update) (Result, error) {
	token, err := outbox.Token(ctx, s.db, u.InteractionID, s.budget.TokenLife)
	if errors.Is(err, outbox.ErrTokenExpired) {
		return "", river.JobCancel(fmt.Errorf("%s: %w", work.ReasonExpired, err))
	}
	if err != nil {
		return "", err
	}
	p, err := s.plan(ctx, u)
	if err != nil {
		return "", err
	}
	r, err := s.deliver(ctx, u, token, p)
	if tokenRefused(err) {
		return "", river.JobCancel(fmt.Errorf("%s: %w: %w", work.ReasonExpired, outbox.ErrTokenExpired, err))
	}
	return r, err
}

// tokenRefused reports whether Discord refused the interaction's token
// itself, which no retry changes: an interaction whose answer did not
// reach Discord within its 3 seconds has no token (10015), and Discord's
// clock may end its 15 minutes ahead of the ledger's (50027). The update
// is lost as with a token past its life in the ledger, and callers count
// it the same way; the work it reports on stands.
func tokenRefused(err error) bool {
	var api *transport.APIError
	return errors.As(err, &api) && api.TokenRefused()
}

func (s *Sender) policy(lane work.Lane) Policy {
	if p, ok := s.budget.Policies[lane]; ok && lane != work.Events {
		return p
	}
	return Merge
}
