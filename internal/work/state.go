package work

import (
	"context"
	"encoding/json"
	"time"

	"github.com/riverqueue/river/rivertype"
)

// State is a job as people see it: queued, running, waiting (until, why),
// done, failed (why), cancelled or expired. Waiting is not failing: a job
// that hit a rate limit is waiting.
type State struct {
	Name     string // queued, running, waiting, done, failed, cancelled, expired
	Reason   Reason
	Detail   string
	Until    time.Time
	Attempts int
}

// StateOf reads a job's state at now from its River row and recorded
// outcome. A job scheduled ahead is waiting once it has been tried or has
// a reason (River keeps a short snooze available with a later
// scheduled_at); before its first try — held for its interaction's answer —
// it is queued.
func StateOf(j *rivertype.JobRow, now time.Time) State {
	var meta struct {
		Output Outcome `json:"output"`
	}
	_ = json.Unmarshal(j.Metadata, &meta) // a job without output has none
	out := meta.Output
	s := State{Reason: out.Reason, Detail: out.Detail, Until: out.Until, Attempts: j.Attempt}
	switch j.State {
	case rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateScheduled, rivertype.JobStateRetryable:
		s.Name = "queued"
		tried := out.Reason != "" || out.Detail != "" || j.Attempt > 0
		if j.State == rivertype.JobStateRetryable || j.ScheduledAt.After(now) && tried {
			s.Name = "waiting"
			if s.Until.IsZero() {
				s.Until = j.ScheduledAt
			}
		}
	case rivertype.JobStateRunning:
		s.Name = "running"
	case rivertype.JobStateCompleted:
		s = State{Name: "done", Attempts: j.Attempt}
	case rivertype.JobStateDiscarded:
		s.Name, s.Reason = "failed", ReasonRetriesExhausted
		if n := len(j.Errors); n > 0 {
			s.Detail = j.Errors[n-1].Error
		}
	case rivertype.JobStateCancelled:
		s.Name = "cancelled"
		switch out.Reason {
		case ReasonNeedsPermission, ReasonTargetMissing, ReasonInvalid:
			s.Name = "failed"
		case ReasonExpired:
			s.Name = "expired"
		}
	}
	return s
}

// JobState reads one job's state.
func JobState(ctx context.Context, c *Client, id int64) (State, error) {
	j, err := c.JobGet(ctx, id)
	if err != nil {
		return State{}, err
	}
	return StateOf(j, time.Now()), nil
}
