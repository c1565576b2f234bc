package work

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// Ordered is embedded in the args of event jobs whose order per target
// matters (a ticket's messages, say): they run one after another in the
// order they were enqueued, whatever River's lanes and retries do.
type Ordered struct {
	OrderTarget string `json:"order_target,omitempty"`
	OrderSeq    int64  `json:"order_seq,omitempty"`
}

// orderWait is how long an ordered job waits for its predecessor before
// looking again.
const orderWait = 250 * time.Millisecond

// NextInOrder takes target's next sequence number in tx, the transaction
// that inserts the job carrying it.
func NextInOrder(ctx context.Context, tx pgx.Tx, target string) (Ordered, error) {
	var seq int64
	err := tx.QueryRow(ctx, `INSERT INTO event_order (target, next_seq) VALUES ($1, 1)
		ON CONFLICT (target) DO UPDATE SET next_seq = event_order.next_seq + 1 RETURNING next_seq`, target).Scan(&seq)
	if err != nil {
		return Ordered{}, fmt.Errorf("work: order %s: %w", target, err)
	}
	return Ordered{OrderTarget: target, OrderSeq: seq}, nil
}

// ordering is the middleware half: a job runs only when its predecessor
// has finished, and a finished job — done, or failed for good — lets the
// next one go.
type ordering struct {
	river.MiddlewareDefaults
	db *pgxpool.Pool
}

func (o *ordering) Work(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) error {
	var ord Ordered
	if json.Unmarshal(job.EncodedArgs, &ord) != nil || ord.OrderTarget == "" {
		return doInner(ctx)
	}
	var done int64
	if err := o.db.QueryRow(ctx, `SELECT done_seq FROM event_order WHERE target = $1`, ord.OrderTarget).Scan(&done); err != nil {
		return fmt.Errorf("work: order %s: %w", ord.OrderTarget, err)
	}
	switch {
	case done >= ord.OrderSeq:
		return nil // already finished by an earlier attempt
	case done < ord.OrderSeq-1:
		return river.JobSnooze(orderWait)
	}
	err := doInner(ctx)
	var snooze *river.JobSnoozeError
	var cancel *river.JobCancelError
	finished := err == nil || errors.As(err, &cancel) ||
		err != nil && !errors.As(err, &snooze) && job.Attempt >= job.MaxAttempts
	if finished {
		if _, uerr := o.db.Exec(context.WithoutCancel(ctx), `UPDATE event_order SET done_seq = $2 WHERE target = $1 AND done_seq = $2 - 1`,
			ord.OrderTarget, ord.OrderSeq); uerr != nil {
			return errors.Join(err, fmt.Errorf("work: order %s: %w", ord.OrderTarget, uerr))
		}
	}
	return err
}
