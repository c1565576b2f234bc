package followup

import (
	"context"
	"errors"
	"fmt"

	"github.com/herald-bot/herald/internal/discord/rest"
	"github.com/herald-bot/herald/internal/discord/transport"
)

// deliver carries out a plan.
func (s *Sender) deliver(ctx context.Context, u Update, token string, p plan) (Result, error) {
	switch p.action {
	case edit:
		_, err := s.discord.EditFollowup(ctx, token, p.target, rest.MessageEdit{Content: &p.content})
		return p.result, err
	case create:
		if p.sending {
			return s.reconcile(ctx, u, token)
		}
		return s.create(ctx, u, token, p.content)
	}
	return p.result, nil
}

// create posts a follow-up, marked as sending first: a crash from here on
// leaves the mark for the next attempt to reconcile.
func (s *Sender) create(ctx context.Context, u Update, token, content string) (Result, error) {
	if err := s.mark(ctx, u, true); err != nil {
		return "", err
	}
	m, err := s.discord.CreateFollowup(ctx, token, rest.WebhookMessage{Content: content})
	if err != nil {
		if mayHaveSent(err) {
			return s.reconcile(ctx, u, token)
		}
		// Discord did not take it: the next attempt may post it.
		return "", errors.Join(err, s.mark(context.WithoutCancel(ctx), u, false))
	}
	_, err = s.db.Exec(ctx, `UPDATE interaction_messages SET last_message_id = $3, last_content = $4, last_sent_at = now(),
		pending_key = NULL, pending_content = NULL, pending_sending = false
		WHERE interaction_id = $1 AND pending_key = $2`, u.InteractionID, u.Key, m.ID, content)
	if err != nil {
		return "", fmt.Errorf("followup: record %s: %w", u.Key, err)
	}
	return Sent, nil
}

func (s *Sender) mark(ctx context.Context, u Update, sending bool) error {
	if _, err := s.db.Exec(ctx, `UPDATE interaction_messages SET pending_sending = $3 WHERE interaction_id = $1 AND pending_key = $2`,
		u.InteractionID, u.Key, sending); err != nil {
		return fmt.Errorf("followup: mark %s: %w", u.Key, err)
	}
	return nil
}

// mayHaveSent tells a create Discord may have carried out — its answer was
// lost, or the wait for it was cut short — from one it did not.
func mayHaveSent(err error) bool {
	class, _ := transport.Classify(err)
	return class == transport.UnknownOutcome || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// reconcile settles a create whose outcome is unknown without posting it
// again: its content is merged into the last message by an edit. The
// member may then read it twice (if the lost create did land), but never
// gets a second message.
func (s *Sender) reconcile(ctx context.Context, u Update, token string) (Result, error) {
	var target, content string
	err := s.db.QueryRow(ctx, `UPDATE interaction_messages SET last_content = left(last_content || E'\n' || pending_content, $3),
			pending_key = NULL, pending_content = NULL, pending_sending = false
		WHERE interaction_id = $1 AND pending_key = $2 RETURNING last_message_id, last_content`,
		u.InteractionID, u.Key, maxContent).Scan(&target, &content)
	if err != nil {
		return "", fmt.Errorf("followup: reconcile %s: %w", u.Key, err)
	}
	s.count.WithLabelValues(string(u.Lane), string(Reconciled)).Inc()
	if _, err := s.discord.EditFollowup(ctx, token, target, rest.MessageEdit{Content: &content}); err != nil {
		return "", err
	}
	return Reconciled, nil
}
