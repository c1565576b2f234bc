package followup

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
)

// action is what delivering an update takes.
type action int

const (
	edit   action = iota // edit target to show content (idempotent)
	create               // post a follow-up with content
	drop                 // nothing
)

// original is the interaction's reply, as Discord's webhook routes name it.
const original = "@original"

// maxContent is Discord's limit on a message's content.
const maxContent = 2000

// plan is how to deliver one update, recorded before anything is sent.
type plan struct {
	action  action
	target  string // edit: the message to edit
	content string
	result  Result
	// sending marks a create an earlier attempt may have posted: its
	// outcome is unknown and it must not be posted again.
	sending bool
}

// state is an interaction's messages as recorded.
type state struct {
	sent           int
	last           *string
	lastContent    string
	lastSentAt     *time.Time
	applied        []string
	pendingKey     *string
	pendingContent *string
	pendingSending bool
}

// plan decides how u is delivered and records the decision with u's key,
// under a lock on the interaction's row, so concurrent updates of one
// interaction take turns and a retried update finds its decision.
func (s *Sender) plan(ctx context.Context, u Update) (p plan, err error) {
	err = pgx.BeginFunc(ctx, s.db, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO interaction_messages (interaction_id) VALUES ($1) ON CONFLICT DO NOTHING`, u.InteractionID); err != nil {
			return err
		}
		var st state
		if err := tx.QueryRow(ctx, `SELECT sent, last_message_id, last_content, last_sent_at, applied, pending_key, pending_content, pending_sending
			FROM interaction_messages WHERE interaction_id = $1 FOR UPDATE`, u.InteractionID).Scan(
			&st.sent, &st.last, &st.lastContent, &st.lastSentAt, &st.applied, &st.pendingKey, &st.pendingContent, &st.pendingSending); err != nil {
			return err
		}
		if slices.Contains(st.applied, u.Key) {
			p = st.replay(u.Key)
			return nil
		}
		p = s.decide(st, u)
		s.count.WithLabelValues(string(u.Lane), string(p.result)).Inc()
		if st.sent == 0 {
			s.interactions.Inc()
		}
		return s.record(ctx, tx, u, p)
	})
	if err != nil {
		return plan{}, fmt.Errorf("followup: plan %s: %w", u.Key, err)
	}
	return p, nil
}

// replay is the plan of an update decided by an earlier attempt: its
// create if that is still pending, else an edit showing the last
// message's recorded content — which includes the update — again.
func (st state) replay(key string) plan {
	if st.pendingKey != nil && *st.pendingKey == key {
		return plan{action: create, content: *st.pendingContent, result: Sent, sending: st.pendingSending}
	}
	return plan{action: edit, target: *st.last, content: st.lastContent, result: Merged}
}

// decide applies the budget: the first update fills the reply; later ones
// become follow-ups while the budget lasts and the window has passed (and
// no other create is pending); the rest merge into the last message or
// drop by the lane's policy.
func (s *Sender) decide(st state, u Update) plan {
	switch {
	case st.sent == 0:
		return plan{action: edit, target: original, content: u.Content, result: Sent}
	case st.sent < s.budget.Max && st.pendingKey == nil && (st.lastSentAt == nil || time.Since(*st.lastSentAt) >= s.budget.Window):
		return plan{action: create, content: u.Content, result: Sent}
	case s.policy(u.Lane) == Drop:
		return plan{action: drop, result: Dropped}
	}
	return plan{action: edit, target: *st.last, content: truncate(st.lastContent + "\n" + u.Content), result: Merged}
}

// record stores the decision with the update's key.
func (s *Sender) record(ctx context.Context, tx pgx.Tx, u Update, p plan) error {
	var err error
	switch {
	case p.action == create:
		_, err = tx.Exec(ctx, `UPDATE interaction_messages SET sent = sent + 1, last_sent_at = now(), applied = applied || $2::text,
			pending_key = $2, pending_content = $3, pending_sending = false WHERE interaction_id = $1`, u.InteractionID, u.Key, p.content)
	case p.action == edit && p.result == Sent:
		_, err = tx.Exec(ctx, `UPDATE interaction_messages SET sent = 1, last_message_id = $3, last_content = $4, last_sent_at = now(),
			applied = applied || $2::text WHERE interaction_id = $1`, u.InteractionID, u.Key, p.target, p.content)
	case p.action == edit:
		_, err = tx.Exec(ctx, `UPDATE interaction_messages SET last_content = $3, applied = applied || $2::text
			WHERE interaction_id = $1`, u.InteractionID, u.Key, p.content)
	default:
		_, err = tx.Exec(ctx, `UPDATE interaction_messages SET applied = applied || $2::text WHERE interaction_id = $1`, u.InteractionID, u.Key)
	}
	return err
}

// truncate keeps the last maxContent characters' worth from the start of
// s, as Discord would refuse a longer message.
func truncate(s string) string {
	if r := []rune(s); len(r) > maxContent {
		return string(r[:maxContent])
	}
	return s
}
