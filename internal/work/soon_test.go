package work_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/herald-bot/herald/internal/store/storetest"
	"github.com/herald-bot/herald/internal/work"
)

// A job due within River's scheduler round is inserted available, so it
// starts once due rather than at the scheduler's next round; one due
// later stays scheduled.
func TestJobDueSoonIsAvailable(t *testing.T) {
	t.Parallel()
	c, err := work.NewClient(storetest.Pool(t), work.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		in   time.Duration
		want rivertype.JobState
	}{{time.Second, rivertype.JobStateAvailable}, {time.Minute, rivertype.JobStateScheduled}} {
		at := time.Now().Add(tc.in).Round(time.Microsecond)
		res, err := c.Insert(t.Context(), blockArgs{}, &river.InsertOpts{ScheduledAt: at})
		if err != nil {
			t.Fatal(err)
		}
		if j := res.Job; j.State != tc.want || !j.ScheduledAt.Equal(at) {
			t.Errorf("due in %s: %s at %s, want %s at %s", tc.in, j.State, j.ScheduledAt, tc.want, at)
		}
	}
}

// Inserted available, a job due soon still does not start before its time.
func TestJobDueSoonStartsWhenDue(t *testing.T) {
	t.Parallel()
	c, w := newClient(t, time.Second)
	at := time.Now().Add(500 * time.Millisecond)
	if _, err := c.Insert(t.Context(), blockArgs{Lane: "events"}, &river.InsertOpts{Queue: string(work.Events), ScheduledAt: at}); err != nil {
		t.Fatal(err)
	}
	recv(t, w.started)
	if started := time.Now(); started.Before(at) {
		t.Errorf("started at %s, before it was due at %s", started.Format(time.StampMicro), at.Format(time.StampMicro))
	}
	close(w.release)
}
