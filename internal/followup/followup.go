// Package followup sends the follow-up messages an interaction causes,
// within its message budget (seed 001): at most Max messages per
// interaction, updates closer together than Window merged into the last
// message, and past the budget merged or dropped by the lane's policy —
// every merge and drop counted.
package followup

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/riverqueue/river"

	"github.com/herald-bot/herald/internal/discord/transport"
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

// Sender posts follow-ups through herald's transport.
type Sender struct {
	DB      *pgxpool.Pool
	Engine  *transport.Engine
	APIBase string // e.g. https://discord.com/api/v10
	AppID   string
	Budget  Budget
	count   *prometheus.CounterVec
	// interactions counts interactions with at least one follow-up, so
	// messages per interaction is herald_followup_messages_total{outcome="sent"}
	// over it.
	interactions prometheus.Counter
}

// NewSender builds a Sender and registers its counter.
func NewSender(db *pgxpool.Pool, e *transport.Engine, apiBase, appID string, b Budget, reg prometheus.Registerer) *Sender {
	s := &Sender{DB: db, Engine: e, APIBase: apiBase, AppID: appID, Budget: b,
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
			_, rerr := s.DB.Exec(context.WithoutCancel(ctx), `UPDATE interaction_messages SET sent = sent - 1 WHERE interaction_id = $1`, interactionID)
			return "", errors.Join(err, rerr)
		}
		if _, err := s.DB.Exec(ctx, `UPDATE interaction_messages SET last_message_id = $2, last_content = $3, last_sent_at = now()
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
	err = s.DB.QueryRow(ctx, `UPDATE interaction_messages SET last_content = left(last_content || E'\n' || $2, 2000)
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
	if p, ok := s.Budget.Policies[lane]; ok && lane != work.Events {
		return p
	}
	return Merge
}

// reserve takes one message of the budget unless it is spent or the last
// message went out within the coalesce window.
func (s *Sender) reserve(ctx context.Context, interactionID string) (ok bool, sent int, err error) {
	err = s.DB.QueryRow(ctx, `
		INSERT INTO interaction_messages (interaction_id, sent) VALUES ($1, 1)
		ON CONFLICT (interaction_id) DO UPDATE SET sent = interaction_messages.sent + 1
		WHERE interaction_messages.sent < $2
		  AND (interaction_messages.last_sent_at IS NULL OR interaction_messages.last_sent_at < now() - make_interval(secs => $3))
		RETURNING sent`, interactionID, s.Budget.Max, s.Budget.Window.Seconds()).Scan(&sent)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, 0, nil
	}
	if err != nil {
		return false, 0, fmt.Errorf("followup: budget: %w", err)
	}
	return true, sent, nil
}

func (s *Sender) post(ctx context.Context, token, content string) (string, error) {
	var m struct{ ID string }
	err := s.call(ctx, http.MethodPost, "/webhooks/"+s.AppID+"/"+token+"?wait=true", content, &m)
	return m.ID, err
}

func (s *Sender) edit(ctx context.Context, token, messageID, content string) error {
	return s.call(ctx, http.MethodPatch, "/webhooks/"+s.AppID+"/"+token+"/messages/"+messageID, content, nil)
}

func (s *Sender) call(ctx context.Context, method, path, content string, out any) error {
	body, _ := json.Marshal(map[string]string{"content": content})
	req, err := http.NewRequestWithContext(ctx, method, s.APIBase+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.Engine.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}
