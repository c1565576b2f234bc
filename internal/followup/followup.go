// Package followup sends the follow-up messages an interaction causes,
// within its message budget (seed 001): at most Max messages per
// interaction, updates closer together than Window merged into the last
// message, and past the budget merged or dropped by the lane's policy —
// every merge and drop counted.
package followup

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/riverqueue/river"

	"github.com/herald-bot/herald/internal/discord/rest"
	"github.com/herald-bot/herald/internal/work"
)

// Policy is what happens to an update beyond the budget.
type Policy string

const (
	Merge Policy = "merge" // appended to the interaction's last message
	Drop  Policy = "drop"  // not sent, counted
)

// Budget limits the messages one interaction may cause.
type Budget struct {
	Max    int           // max_messages_per_interaction
	Window time.Duration // coalesce_window: closer updates merge
	// Policies per lane; a lane without one merges. The events lane always
	// merges: an event is never dropped.
	Policies map[work.Lane]Policy
}

// Sender posts follow-ups through herald's REST client.
type Sender struct {
	db      *pgxpool.Pool
	discord *rest.Client
	budget  Budget
	count   *prometheus.CounterVec
	// interactions counts interactions with at least one follow-up, so
	// messages per interaction is herald_followup_messages_total{outcome="sent"}
	// over it.
	interactions prometheus.Counter
}

// NewSender builds a Sender and registers its counter.
func NewSender(db *pgxpool.Pool, discord *rest.Client, b Budget, reg prometheus.Registerer) *Sender {
	s := &Sender{db: db, discord: discord, budget: b,
		count: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "herald_followup_messages_total",
			Help: "Follow-up updates by lane and what became of them (sent, merged, dropped).",
		}, []string{"lane", "outcome"}),
		interactions: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "herald_followup_interactions_total",
			Help: "Interactions that sent at least one follow-up; messages per interaction = sent follow-ups / this.",
		})}
	if reg != nil {
		reg.MustRegister(s.count, s.interactions)
	}
	return s
}

// Result says what became of one update.
type Result string

const (
	Sent    Result = "sent"
	Merged  Result = "merged"
	Dropped Result = "dropped"
)

// Send delivers content for the interaction as a follow-up, or merges or
// drops it as the budget says. It is called from jobs; ctx carries the
// job's priority.
func (s *Sender) Send(ctx context.Context, lane work.Lane, interactionID, token, content string) (Result, error) {
	reserved, n, err := s.reserve(ctx, interactionID)
	if err != nil {
		return "", err
	}
	if reserved {
		id, err := s.post(ctx, token, content)
		if err != nil {
			_, rerr := s.db.Exec(context.WithoutCancel(ctx), `UPDATE interaction_messages SET sent = sent - 1 WHERE interaction_id = $1`, interactionID)
			return "", errors.Join(err, rerr)
		}
		if _, err := s.db.Exec(ctx, `UPDATE interaction_messages SET last_message_id = $2, last_content = $3, last_sent_at = now()
			WHERE interaction_id = $1`, interactionID, id, content); err != nil {
			return "", fmt.Errorf("followup: record: %w", err)
		}
		s.count.WithLabelValues(string(lane), string(Sent)).Inc()
		if n == 1 {
			s.interactions.Inc()
		}
		return Sent, nil
	}
	if s.policy(lane) == Drop {
		s.count.WithLabelValues(string(lane), string(Dropped)).Inc()
		return Dropped, nil
	}
	var id *string
	var merged string
	err = s.db.QueryRow(ctx, `UPDATE interaction_messages SET last_content = left(last_content || E'\n' || $2, 2000)
		WHERE interaction_id = $1 AND last_message_id IS NOT NULL RETURNING last_message_id, last_content`,
		interactionID, content).Scan(&id, &merged)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", river.JobSnooze(time.Second) // merge once the first message exists
	}
	if err != nil {
		return "", fmt.Errorf("followup: merge: %w", err)
	}
	if err := s.edit(ctx, token, *id, merged); err != nil {
		return "", err
	}
	s.count.WithLabelValues(string(lane), string(Merged)).Inc()
	return Merged, nil
}

func (s *Sender) policy(lane work.Lane) Policy {
	if p, ok := s.budget.Policies[lane]; ok && lane != work.Events {
		return p
	}
	return Merge
}

// reserve takes one message of the budget unless it is spent or the last
// message went out within the coalesce window.
func (s *Sender) reserve(ctx context.Context, interactionID string) (ok bool, sent int, err error) {
	err = s.db.QueryRow(ctx, `
		INSERT INTO interaction_messages (interaction_id, sent) VALUES ($1, 1)
		ON CONFLICT (interaction_id) DO UPDATE SET sent = interaction_messages.sent + 1
		WHERE interaction_messages.sent < $2
		  AND (interaction_messages.last_sent_at IS NULL OR interaction_messages.last_sent_at < now() - make_interval(secs => $3))
		RETURNING sent`, interactionID, s.budget.Max, s.budget.Window.Seconds()).Scan(&sent)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, 0, nil
	}
	if err != nil {
		return false, 0, fmt.Errorf("followup: budget: %w", err)
	}
	return true, sent, nil
}

func (s *Sender) post(ctx context.Context, token, content string) (string, error) {
	m, err := s.discord.CreateFollowup(ctx, token, rest.WebhookMessage{Content: content})
	if err != nil {
		return "", err
	}
	return m.ID, nil
}

func (s *Sender) edit(ctx context.Context, token, messageID, content string) error {
	_, err := s.discord.EditFollowup(ctx, token, messageID, rest.MessageEdit{Content: &content})
	return err
}
