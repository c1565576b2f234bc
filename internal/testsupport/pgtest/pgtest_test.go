package pgtest

import (
	"context"
	"crypto/rand"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/herald-bot/herald/internal/testsupport/wait"
)

func TestMain(m *testing.M) { Main(m) }

// TestParallelDatabasesAreSeparate creates the same table in parallel tests:
// had they shared a database, one CREATE TABLE would fail whatever the timing.
func TestParallelDatabasesAreSeparate(t *testing.T) {
	t.Parallel()
	for _, who := range []string{"a", "b"} {
		t.Run(who, func(t *testing.T) {
			t.Parallel()
			pool := Pool(t)
			ctx := t.Context()
			if _, err := pool.Exec(ctx, "CREATE TABLE widgets (owner text)"); err != nil {
				t.Fatal(err)
			}
			if _, err := pool.Exec(ctx, "INSERT INTO widgets VALUES ($1)", who); err != nil {
				t.Fatal(err)
			}
			rows, _ := pool.Query(ctx, "SELECT owner FROM widgets")
			owners, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				t.Fatal(err)
			}
			if len(owners) != 1 || owners[0] != who {
				t.Fatalf("widgets = %v, want only %q", owners, who)
			}
		})
	}
}

// A test's database commits without waiting for the disk: it never has
// to outlive its server.
func TestCommitsDoNotWaitForTheDisk(t *testing.T) {
	t.Parallel()
	var setting string
	if err := Pool(t).QueryRow(t.Context(), "SHOW synchronous_commit").Scan(&setting); err != nil || setting != "off" {
		t.Fatalf("synchronous_commit %q (%v), want off", setting, err)
	}
}

func TestTablesAreInvisibleAcrossDatabases(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	a, b := URL(t), URL(t)
	if a == b {
		t.Fatalf("two calls returned the same URL %q", a)
	}
	mustExec(t, a, "CREATE TABLE only_in_a (id int)")
	var found *string
	if err := connect(t, b).QueryRow(ctx, "SELECT to_regclass('only_in_a')::text").Scan(&found); err != nil {
		t.Fatal(err)
	}
	if found != nil {
		t.Fatalf("table from the first database is visible in the second as %q", *found)
	}
}

func TestDatabaseIsDroppedAfterItsTest(t *testing.T) {
	t.Parallel()
	var name string
	outer := t
	t.Run("owner", func(t *testing.T) {
		// The connection outlives the subtest on purpose: the drop must not
		// wait for tests to close theirs.
		conn := connect(outer, URL(t))
		if err := conn.QueryRow(t.Context(), "SELECT current_database()").Scan(&name); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(name, "pgtest_") {
			t.Fatalf("database name %q lacks the pgtest_ prefix", name)
		}
		if !databaseExists(t, name) {
			t.Fatalf("database %s missing while its test runs", name)
		}
	})
	// The drop runs after the test, in the background.
	wait.Until(t, "the drop of database "+name+" after its test", func() bool { return !databaseExists(t, name) })
}

func TestTemplateIsSetUpOnceAndCloned(t *testing.T) {
	t.Parallel()
	var setups atomic.Int32
	tpl := &Template{
		Name: "once-" + rand.Text(),
		Setup: func(ctx context.Context, url string) error {
			setups.Add(1)
			conn, err := pgx.Connect(ctx, url)
			if err != nil {
				return err
			}
			defer conn.Close(ctx)
			_, err = conn.Exec(ctx, "CREATE TABLE settings (k text PRIMARY KEY); INSERT INTO settings VALUES ('seeded')")
			return err
		},
	}
	t.Run("clones", func(t *testing.T) {
		for _, name := range []string{"1", "2", "3"} {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				pool := PoolFrom(t, tpl)
				ctx := t.Context()
				// Each clone starts from the template, not from another
				// clone's changes.
				if _, err := pool.Exec(ctx, "INSERT INTO settings VALUES ($1)", name); err != nil {
					t.Fatal(err)
				}
				var n int
				if err := pool.QueryRow(ctx, "SELECT count(*) FROM settings").Scan(&n); err != nil {
					t.Fatal(err)
				}
				if n != 2 {
					t.Fatalf("settings has %d rows, want the seeded one and this clone's", n)
				}
			})
		}
	})
	if got := setups.Load(); got != 1 {
		t.Fatalf("Setup ran %d times, want 1", got)
	}
}

func TestTemplateSetupErrorIsReturnedToEveryCaller(t *testing.T) {
	t.Parallel()
	var setups atomic.Int32
	broken := errors.New("migration 3 is broken")
	tpl := &Template{
		Name: "broken-" + rand.Text(),
		Setup: func(context.Context, string) error {
			setups.Add(1)
			return broken
		},
	}
	for range 2 {
		_, _, err := proc.createDatabase(t.Context(), tpl)
		if !errors.Is(err, broken) {
			t.Fatalf("createDatabase error = %v, want it to wrap %v", err, broken)
		}
	}
	if got := setups.Load(); got != 1 {
		t.Fatalf("Setup ran %d times, want 1", got)
	}
}

func connect(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func mustExec(t *testing.T, url, sql string) {
	t.Helper()
	if _, err := connect(t, url).Exec(t.Context(), sql); err != nil {
		t.Fatal(err)
	}
}

func databaseExists(t *testing.T, name string) bool {
	t.Helper()
	admin := adminPool(t)
	var exists bool
	err := admin.QueryRow(t.Context(), "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists)
	if err != nil {
		t.Fatal(err)
	}
	return exists
}

func adminPool(t *testing.T) *pgxpool.Pool {
	t.Helper()
	admin, err := proc.server(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return admin
}
