package work

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/herald-bot/herald/internal/discord/transport"
)

// Reason is why a job waits or failed, in the words the admin status view
// shows (locales: job.reason.*).
type Reason string

const (
	ReasonRateLimited      Reason = "rate_limited"        // waiting: Discord asked us to slow down
	ReasonUnavailable      Reason = "discord_unavailable" // waiting: Discord fails on this route (its circuit is open)
	ReasonBlocked          Reason = "edge_blocked"        // waiting: Discord's edge (Cloudflare) blocked herald
	ReasonNeedsPermission  Reason = "needs_permission"    // failed: the bot lacks a permission
	ReasonTargetMissing    Reason = "target_missing"      // failed: the message, channel or role is gone
	ReasonInvalid          Reason = "invalid"             // failed: Discord rejected the request
	ReasonRetriesExhausted Reason = "retries_exhausted"   // failed: transient errors outlived every attempt
	ReasonExpired          Reason = "expired"             // a view past its deadline: nobody needs it any more
)

// Outcome is what a job recorded about its last attempt: where it waits or
// why it failed. It is stored as the job's River output.
type Outcome struct {
	Reason Reason    `json:"reason"`
	Detail string    `json:"detail,omitempty"`
	Until  time.Time `json:"until,omitzero"`
}

// outcomes turns the transport's error classes into job outcomes, so every
// worker gets the same rules (DESIGN.md, seeds 000 and 004):
//   - rate limited: snooze for exactly the wait; a snooze is no attempt and
//     holds no worker or transaction while it waits;
//   - Discord failing with a known wait (a route's open circuit): snooze
//     until its next probe, waiting rather than spending attempts;
//   - blocked by Discord's edge (Cloudflare): snooze while the transport
//     holds every request; no permission is missing;
//   - missing permission, missing target, invalid request: cancel at once
//     with the reason, since retrying cannot help;
//   - transient errors, unknown outcomes and a rejected token: River's
//     retry with backoff; an unknown outcome is reconciled by the job's own
//     next attempt (message nonces), never resent blindly by this layer.
type outcomes struct {
	river.MiddlewareDefaults
	metrics *metrics
}

func (o *outcomes) Work(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) error {
	if d, ok := deadline(job); ok && time.Now().After(d) {
		_ = river.RecordOutput(ctx, Outcome{Reason: ReasonExpired, Until: d})
		o.metrics.outcomes.WithLabelValues(job.Kind, string(ReasonExpired)).Inc()
		return river.JobCancel(fmt.Errorf("%s: deadline %s passed", ReasonExpired, d.Format(time.RFC3339)))
	}
	err := doInner(ctx)
	if err == nil {
		o.metrics.outcomes.WithLabelValues(job.Kind, "done").Inc()
		o.metrics.attempts.WithLabelValues(job.Kind).Observe(float64(job.Attempt))
		return nil
	}
	var snooze *river.JobSnoozeError
	var cancel *river.JobCancelError
	if errors.As(err, &snooze) || errors.As(err, &cancel) {
		return err // the worker decided itself
	}
	class, wait := transport.Classify(err)
	record := func(r Reason, until time.Time) {
		// Best effort: the outcome is for people, the return value decides.
		_ = river.RecordOutput(ctx, Outcome{Reason: r, Detail: err.Error(), Until: until})
		outcome := string(r)
		if r == "" {
			outcome = "retry"
		}
		o.metrics.outcomes.WithLabelValues(job.Kind, outcome).Inc()
	}
	switch class {
	case transport.RateLimited:
		record(ReasonRateLimited, time.Now().Add(wait))
		o.metrics.waits.WithLabelValues(job.Kind).Observe(wait.Seconds())
		return river.JobSnooze(wait)
	case transport.Blocked:
		record(ReasonBlocked, time.Now().Add(wait))
		return river.JobSnooze(wait)
	case transport.Permission:
		record(ReasonNeedsPermission, time.Time{})
		return river.JobCancel(fmt.Errorf("%s: %w", ReasonNeedsPermission, err))
	case transport.NotFound:
		record(ReasonTargetMissing, time.Time{})
		return river.JobCancel(fmt.Errorf("%s: %w", ReasonTargetMissing, err))
	case transport.Invalid:
		record(ReasonInvalid, time.Time{})
		return river.JobCancel(fmt.Errorf("%s: %w", ReasonInvalid, err))
	case transport.Transient:
		if wait > 0 {
			record(ReasonUnavailable, time.Now().Add(wait))
			return river.JobSnooze(wait)
		}
		record("", time.Time{})
		return err
	default:
		// Replaces any earlier outcome: the job now retries with backoff.
		record("", time.Time{})
		return err
	}
}

// deadline reads a view job's deadline from its encoded args, which carry
// it as "deadline" (see View).
func deadline(job *rivertype.JobRow) (time.Time, bool) {
	var a struct {
		Deadline time.Time `json:"deadline"`
	}
	if json.Unmarshal(job.EncodedArgs, &a) != nil || a.Deadline.IsZero() {
		return time.Time{}, false
	}
	return a.Deadline, true
}

// View is embedded in the args of view jobs (intent view): past
// DeadlineAt the job is cancelled as expired instead of rendering
// something stale, however long a rate limit made it wait.
type View struct {
	DeadlineAt time.Time `json:"deadline"`
}

// TokenLife is how long Discord accepts an interaction's token.
const TokenLife = 15 * time.Minute

// ReplyView is the View of a job that answers the interaction received
// at received: useful while its token lives, less a minute for the
// follow-up itself.
func ReplyView(received time.Time) View {
	return View{DeadlineAt: received.Add(TokenLife - time.Minute)}
}
