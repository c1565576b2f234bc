package pgtest

import (
	"context"
	"testing"
	"time"

	"github.com/herald-bot/herald/internal/pgserver"
)

// Cluster is a throwaway PostgreSQL server of the test's own, for tests
// that must stop, crash and restart Postgres.
type Cluster struct {
	// Server is the cluster itself, whose methods take a context and
	// return errors (pgserver's own tests use them).
	Server *pgserver.Cluster
}

// StartCluster initialises and starts a throwaway cluster from binaries on
// PATH or under /usr/lib/postgresql/*/bin, and removes it in t.Cleanup.
// It takes a few seconds; use it only where Postgres must go away.
func StartCluster(t testing.TB) *Cluster {
	t.Helper()
	c, err := pgserver.StartCluster(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := c.Destroy(ctx); err != nil {
			t.Error(err)
		}
	})
	return &Cluster{Server: c}
}

// URL returns the address of the cluster's postgres database as the
// postgres superuser (trust authentication, no password).
func (c *Cluster) URL() string { return c.Server.URL() }

// Stop shuts the server down, ending every connection; the data stays.
func (c *Cluster) Stop(t testing.TB) {
	t.Helper()
	if err := c.Server.Stop(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// Crash stops the server without a checkpoint, as kill -9 of the postmaster
// would; the next Start runs crash recovery.
func (c *Cluster) Crash(t testing.TB) {
	t.Helper()
	if err := c.Server.Crash(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// Start starts a stopped or crashed server again on the same port, so URL
// stays valid, and returns once it accepts connections.
func (c *Cluster) Start(t testing.TB) {
	t.Helper()
	if err := c.Server.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
}
