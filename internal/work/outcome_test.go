package work_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/herald-bot/herald/internal/discord/transport"
	"github.com/herald-bot/herald/internal/outbox"
	"github.com/herald-bot/herald/internal/store/storetest"
	"github.com/herald-bot/herald/internal/testsupport/wait"
	"github.com/herald-bot/herald/internal/work"
	"github.com/herald-bot/herald/internal/work/worktest"
)

// callArgs is a test job whose one Discord call fails as its Fail says.
type callArgs struct{ Fail string }

func (callArgs) Kind() string { return "test_call" }

type callWorker struct {
	river.WorkerDefaults[callArgs]
	calls chan string
}

// failures are errors exactly as the transport returns them.
var failures = map[string]error{
	"rate_limited": &transport.RateLimitedError{Route: "POST /channels/{channel_id}/messages", Bucket: "b", Scope: "user", RetryAfter: 3 * time.Second},
	"permission":   &transport.APIError{Route: "PUT /guilds/{guild_id}/members/{user_id}/roles/{role_id}", Status: 403, Code: 50013, Message: "Missing Permissions"},
	"not_found":    &transport.APIError{Route: "PATCH /channels/{channel_id}/messages/{message_id}", Status: 404, Code: 10008, Message: "Unknown Message"},
	"invalid":      &transport.APIError{Route: "POST /channels/{channel_id}/messages", Status: 400, Code: 50035, Message: "Invalid Form Body"},
	"transient":    &transport.TransientError{Route: "GET /channels/{channel_id}", Status: http.StatusBadGateway, Attempts: 6},
	"blocked":      &transport.APIError{Route: "POST /channels/{channel_id}/messages", Status: 403, Code: 40333, Message: "internal network error", RetryAfter: 10 * time.Minute},
	"circuit_open": &transport.CircuitOpenError{Route: "POST /channels/{channel_id}/messages", Bucket: "b", ConsecutiveFailures: 10, RetryAfter: 20 * time.Second},
}

func (w *callWorker) Work(_ context.Context, j *river.Job[callArgs]) error {
	w.calls <- j.Args.Fail
	if j.Args.Fail == "rate_limited" && strings.Contains(string(j.Metadata), `"snoozes"`) {
		return nil // the wait passed: the call goes through
	}
	return failures[j.Args.Fail]
}

func startCalls(t *testing.T, pool *pgxpool.Pool) (*work.Client, *callWorker) {
	t.Helper()
	w := &callWorker{calls: make(chan string, 16)}
	return worktest.Started(t, pool, func(r *work.Registry) { work.Register(r, w) }), w
}

// Each transport error class ends the job the way DESIGN.md says: a rate
// limit, an open circuit or a block by Discord's edge waits (no attempt,
// no worker held); a missing
// permission, target or valid body fails at once with its reason;
// transient errors retry.
func TestOutcomesByErrorClass(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t)
	c, w := startCalls(t, pool)
	defer work.Stop(c, time.Second, time.Second)
	ctx := t.Context()
	want := map[string]work.State{
		"rate_limited": {Name: "waiting", Reason: work.ReasonRateLimited},
		"permission":   {Name: "failed", Reason: work.ReasonNeedsPermission},
		"not_found":    {Name: "failed", Reason: work.ReasonTargetMissing},
		"invalid":      {Name: "failed", Reason: work.ReasonInvalid},
		"transient":    {Name: "waiting"},
		"circuit_open": {Name: "waiting", Reason: work.ReasonUnavailable},
		"blocked":      {Name: "waiting", Reason: work.ReasonBlocked},
	}
	ids := map[string]int64{}
	for fail := range want {
		res, err := c.Insert(ctx, callArgs{Fail: fail}, &river.InsertOpts{Queue: string(work.Events), MaxAttempts: 3})
		if err != nil {
			t.Fatal(err)
		}
		ids[fail] = res.Job.ID
	}
	for range want {
		<-w.calls
	}
	for fail, st := range want {
		var got work.State
		wait.Until(t, fail+" settles", func() bool {
			got, _ = work.JobState(ctx, c, ids[fail])
			return got.Name == st.Name && got.Reason == st.Reason
		})
		if got.Detail == "" && st.Reason != "" {
			t.Errorf("%s: no detail recorded", fail)
		}
		if fail == "rate_limited" {
			if wait := time.Until(got.Until); wait > 3*time.Second {
				t.Errorf("rate limited: waiting until %s (in %s), want within Retry-After (3s)", got.Until, wait)
			}
		}
		if fail == "circuit_open" && (got.Attempts != 0 || time.Until(got.Until) < 15*time.Second) {
			t.Errorf("circuit open: %d attempts, waiting until %s; want a snooze until the probe, no attempt spent", got.Attempts, got.Until)
		}
		if fail == "blocked" && (got.Attempts != 0 || time.Until(got.Until) < 9*time.Minute) {
			t.Errorf("blocked by Discord's edge: %d attempts, waiting until %s; want a snooze while the transport holds requests, no attempt spent", got.Attempts, got.Until)
		}
		if st.Name == "failed" && got.Attempts != 1 {
			t.Errorf("%s: failed after %d attempts, want 1", fail, got.Attempts)
		}
	}
	// After its wait the rate-limited job runs again and is done; no copy
	// of it was made.
	wait.Until(t, "rate-limited job done", func() bool {
		got, _ := work.JobState(ctx, c, ids["rate_limited"])
		return got.Name == "done"
	})
	var copies int
	pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = 'test_call' AND args->>'Fail' = 'rate_limited'`).Scan(&copies)
	if copies != 1 {
		t.Errorf("%d rate-limited jobs, want the one", copies)
	}
}

func TestStateOfHeldJob(t *testing.T) {
	t.Parallel()
	j := &rivertype.JobRow{State: rivertype.JobStateScheduled, ScheduledAt: time.Now().Add(outbox.Hold), Metadata: []byte(`{}`)}
	if s := work.StateOf(j, time.Now()); s.Name != "queued" {
		t.Errorf("a held job shows as %q, want queued", s.Name)
	}
	d := &rivertype.JobRow{State: rivertype.JobStateDiscarded, Attempt: 25, Errors: []rivertype.AttemptError{{Error: "502 after 6 attempts"}}, Metadata: []byte(`{}`)}
	if s := work.StateOf(d, time.Now()); s.Name != "failed" || s.Reason != work.ReasonRetriesExhausted || s.Detail != "502 after 6 attempts" {
		t.Errorf("discarded = %+v", s)
	}
}
