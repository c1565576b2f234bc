package outbox

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/herald-bot/herald/internal/work"
)

// Dispatch batching: released rows are moved together, up to
// dispatchBatch at once, waiting at most dispatchLinger for company; rows
// whose hold passed unreleased (their process died, or an answer failed)
// are swept every dispatchSweep, by whichever process gets there first.
//
// While the process is busy with a rush of interactions its jobs wait
// (work.Yield), so a row moved at once would only wait in River instead:
// the dispatcher then lingers busyLinger, and one River insert and one
// COMMIT carry a tenth of a second of interactions instead of a few.
const (
	dispatchBatch   = 200
	dispatchLinger  = 2 * time.Millisecond
	busyLinger      = 100 * time.Millisecond
	dispatchSweep   = 500 * time.Millisecond
	dispatchTimeout = 5 * time.Second
)

// Dispatcher moves the fast path's outbox rows into River: at once when
// released, after their hold otherwise.
type Dispatcher struct {
	db       *pgxpool.Pool
	jobs     *work.Client
	log      *slog.Logger
	busy     func() bool
	released chan int64
	// dispatchBatch, dispatchLinger and busyLinger; tests change them.
	most               int
	linger, lingerBusy time.Duration
}

// NewDispatcher returns a dispatcher inserting into jobs through db;
// busy (nil: never) reports whether the process's jobs wait for a rush
// to pass, as work.Yield's Busy does.
func NewDispatcher(db *pgxpool.Pool, jobs *work.Client, log *slog.Logger, busy func() bool) *Dispatcher {
	if busy == nil {
		busy = func() bool { return false }
	}
	return &Dispatcher{db: db, jobs: jobs, log: log, busy: busy, released: make(chan int64, 4*dispatchBatch),
		most: dispatchBatch, linger: dispatchLinger, lingerBusy: busyLinger}
}

// Release hands outbox rows whose interaction was answered to the
// dispatcher. It never blocks the fast path: a row that finds the queue
// full is swept once its hold passes.
func (d *Dispatcher) Release(ids ...int64) {
	for _, id := range ids {
		select {
		case d.released <- id:
		default:
		}
	}
}

// Run moves released and overdue rows until ctx ends, then moves what was
// released meanwhile.
func (d *Dispatcher) Run(ctx context.Context) {
	sweep := time.NewTicker(dispatchSweep)
	defer sweep.Stop()
	for {
		select {
		case <-ctx.Done():
			d.flush()
			return
		case id := <-d.released:
			d.move(d.batch(id))
		case <-sweep.C:
			d.move(nil)
		}
	}
}

// batch collects released rows for one move: first, and those that
// arrive within the linger, up to the batch's bound.
func (d *Dispatcher) batch(first int64) []int64 {
	ids := []int64{first}
	wait := d.linger
	if d.busy() {
		wait = d.lingerBusy
	}
	linger := time.NewTimer(wait)
	defer linger.Stop()
	for len(ids) < d.most {
		select {
		case id := <-d.released:
			ids = append(ids, id)
		case <-linger.C:
			return ids
		}
	}
	return ids
}

// flush moves what was released before a stop.
func (d *Dispatcher) flush() {
	for {
		select {
		case id := <-d.released:
			d.move(d.batch(id))
		default:
			return
		}
	}
}

// move inserts the jobs of the given rows (nil: of every row past its
// hold) into River and deletes the rows, in one transaction, so each row
// becomes jobs exactly once; rows another process is moving are skipped.
// A failure leaves the rows for the next sweep.
func (d *Dispatcher) move(ids []int64) {
	ctx, cancel := context.WithTimeout(context.Background(), dispatchTimeout)
	defer cancel()
	n, err := d.moveTx(ctx, ids)
	if err != nil {
		d.log.Warn("outbox rows wait for the next sweep", "rows", len(ids), "err", err)
		return
	}
	if ids == nil && n > 0 {
		d.log.Info("moved outbox rows past their hold", "rows", n)
	}
}

func (d *Dispatcher) moveTx(ctx context.Context, ids []int64) (moved int, err error) {
	err = pgx.BeginFunc(ctx, d.db, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `DELETE FROM interaction_outbox WHERE id IN (
				SELECT id FROM interaction_outbox
				WHERE CASE WHEN $1::bigint[] IS NULL THEN release_at <= now() ELSE id = ANY($1) END
				ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED)
			RETURNING jobs`, ids, d.most)
		if err != nil {
			return err
		}
		var params []river.InsertManyParams
		for rows.Next() {
			var raw []byte
			if err := rows.Scan(&raw); err != nil {
				return err
			}
			var jobs []outboxJob
			if err := json.Unmarshal(raw, &jobs); err != nil {
				return fmt.Errorf("decode outbox jobs: %w", err)
			}
			for _, j := range jobs {
				params = append(params, j.params())
			}
			moved++
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if len(params) == 0 {
			return nil
		}
		_, err = d.jobs.InsertManyTx(ctx, tx, params)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("outbox: dispatch: %w", err)
	}
	return moved, nil
}
