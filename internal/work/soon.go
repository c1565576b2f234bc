package work

import (
	"context"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/herald-bot/herald/internal/clock"
)

// schedulerInterval is how often River's scheduler makes scheduled jobs
// available (its default, which herald keeps).
const schedulerInterval = 5 * time.Second

// dueSoon inserts a job due within River's scheduler interval as
// available, as River itself keeps a short snooze or retry: its producer
// fetches it once scheduled_at has passed, instead of after the
// scheduler's next round. A one-second publish delay then costs one
// second, not up to six.
type dueSoon struct {
	river.MiddlewareDefaults
	clock *clock.Clock
}

func (d *dueSoon) InsertMany(ctx context.Context, params []*rivertype.JobInsertParams, doInner func(context.Context) ([]*rivertype.JobInsertResult, error)) ([]*rivertype.JobInsertResult, error) {
	now := d.clock.Now()
	for _, p := range params {
		if p.State == rivertype.JobStateScheduled && p.ScheduledAt != nil && p.ScheduledAt.Sub(now) <= schedulerInterval {
			p.State = rivertype.JobStateAvailable
		}
	}
	return doInner(ctx)
}
