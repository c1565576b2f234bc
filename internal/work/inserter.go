package work

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// Inserter inserts jobs through herald's one River client. Features get
// it before that client exists (the client is built from the kinds they
// register), and herald binds it once built, before anything runs.
type Inserter struct{ c atomic.Pointer[Client] }

// errUnbound is an insert before Bind: a wiring bug.
var errUnbound = errors.New("work: a job was inserted before herald's River client was built")

// Bind makes the inserter insert through c.
func (i *Inserter) Bind(c *Client) { i.c.Store(c) }

// InsertManyTx inserts jobs within tx.
func (i *Inserter) InsertManyTx(ctx context.Context, tx pgx.Tx, params []river.InsertManyParams) ([]*rivertype.JobInsertResult, error) {
	c := i.c.Load()
	if c == nil {
		return nil, errUnbound
	}
	return c.InsertManyTx(ctx, tx, params)
}
