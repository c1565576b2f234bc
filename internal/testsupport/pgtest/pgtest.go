// Package pgtest gives every test its own PostgreSQL database.
//
// The server is found once per test process by pgserver's rules:
// DATABASE_URL if set, else postgres://postgres@127.0.0.1:5432, else a
// throwaway cluster started from initdb and pg_ctl on PATH or under
// /usr/lib/postgresql/*/bin. Databases are
// named after the process, a counter and random bits, so parallel tests and
// parallel test binaries never share one.
//
// A package using pgtest runs its tests through Main:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
//
//	func TestSomething(t *testing.T) {
//		t.Parallel()
//		pool := pgtest.Pool(t) // a fresh, empty database
//		...
//	}
//
// Tests that must see Postgres go away use StartCluster, never the shared
// server.
package pgtest

import (
	"context"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/herald-bot/herald/internal/freeport"
	"github.com/herald-bot/herald/internal/pgserver"
)

// proc is the one server resolution and template registry this test process
// shares; its fields are guarded by its own mutex.
var proc = newProcess(pgserver.System())

// cleanupTimeout bounds drops and shutdown, which run after a test's context
// is already cancelled.
const cleanupTimeout = time.Minute

// Template describes a database prepared once per test process and cloned
// for every test that asks for it: CREATE DATABASE ... TEMPLATE is far faster
// than migrating each test's database. Templates are told apart by Name.
type Template struct {
	Name string
	// Setup prepares the database at url, for example by migrating it. It
	// must close its connections before it returns.
	Setup func(ctx context.Context, url string) error
}

// Main runs the tests, then waits for their databases' drops, drops this
// process's template databases and stops the throwaway cluster if one was
// started; a failed drop fails the run. Every package using pgtest calls
// it: func TestMain(m *testing.M) { pgtest.Main(m) }
func Main(m *testing.M) {
	os.Exit(proc.run(m))
}

// URL returns the URL of a new, empty database owned by this test, dropped
// once the test ends (Main waits for the drop).
func URL(t testing.TB) string {
	t.Helper()
	return newDatabase(t, nil)
}

// URLFrom returns the URL of a new database cloned from tpl, which is set up
// on first use in this process; a nil tpl means an empty database.
func URLFrom(t testing.TB, tpl *Template) string {
	t.Helper()
	return newDatabase(t, tpl)
}

// Pool is URL plus a pool on the new database, closed in t.Cleanup.
func Pool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	return newPool(t, URL(t))
}

// PoolFrom is URLFrom plus a pool on the new database, closed in t.Cleanup.
func PoolFrom(t testing.TB, tpl *Template) *pgxpool.Pool {
	t.Helper()
	return newPool(t, URLFrom(t, tpl))
}

func newDatabase(t testing.TB, tpl *Template) string {
	t.Helper()
	name, url, err := proc.createDatabase(t.Context(), tpl)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proc.dropLater(name) })
	return url
}

func newPool(t testing.TB, url string) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// run is Main without the exit, so the shutdown error is reported.
func (p *process) run(m interface{ Run() int }) int {
	p.mu.Lock()
	p.inMain = true
	p.mu.Unlock()
	code := m.Run()
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	if err := p.shutdown(ctx); err != nil {
		slog.Error("pgtest: cleanup after tests failed", "err", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// RefusedURL is a Postgres URL, with a password, on a loopback port that
// refuses every connection until the test ends.
func RefusedURL(t testing.TB) string {
	t.Helper()
	addr, release, err := freeport.Refusing()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(release)
	return "postgres://postgres:sekret@" + addr + "/postgres?sslmode=disable"
}
