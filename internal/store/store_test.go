package store_test

import (
	"bytes"
	"errors"
	"log/slog"
	"net/url"
	"strings"
	"testing"

	"github.com/herald-bot/herald/internal/store"
	"github.com/herald-bot/herald/internal/testsupport/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// Migrating twice succeeds, the second run changes nothing, and Check
// turns from ErrPending to nil.
func TestMigrateIsIdempotent(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool := pgtest.Pool(t)
	var logs bytes.Buffer
	m, err := store.NewMigrator(pool, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()

	if err := m.Check(ctx); !errors.Is(err, store.ErrPending) {
		t.Fatalf("fresh database: Check = %v, want ErrPending", err)
	}
	if err := m.Up(ctx); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "schema=herald") || !strings.Contains(logs.String(), "schema=river") {
		t.Errorf("first run should log both schemas' migrations:\n%s", logs.String())
	}
	logs.Reset()
	if err := m.Up(ctx); err != nil {
		t.Fatalf("second Up: %v", err)
	}
	if strings.Contains(logs.String(), "applied migration") || !strings.Contains(logs.String(), "schema is current") {
		t.Errorf("second run should apply nothing:\n%s", logs.String())
	}
	if err := m.Check(ctx); err != nil {
		t.Fatalf("Check after Up = %v", err)
	}
	if _, err := pool.Exec(ctx, "INSERT INTO guild_settings (guild_id, locale) VALUES (1, 'de')"); err != nil {
		t.Fatalf("guild_settings usable: %v", err)
	}
	if _, err := pool.Exec(ctx, "INSERT INTO guild_settings (guild_id, locale) VALUES (2, 'xx')"); err == nil {
		t.Error("an unshipped locale must be rejected")
	}
}

// Concurrent migrators (a migrate Job racing an auto-migrating pod) both
// succeed and leave one consistent schema.
func TestConcurrentMigrations(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool := pgtest.Pool(t)
	errs := make(chan error, 3)
	for range 3 {
		go func() {
			m, err := store.NewMigrator(pool, slog.New(slog.DiscardHandler))
			if err != nil {
				errs <- err
				return
			}
			defer m.Close()
			errs <- m.Up(ctx)
		}()
	}
	for range 3 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

func TestEnsureDatabaseCreatesMissingDatabase(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	u, err := url.Parse(pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	// A sibling name of this test's own database; dropped below.
	u.Path += "_ensure"
	created, err := store.EnsureDatabase(ctx, u.String())
	if err != nil || !created {
		t.Fatalf("EnsureDatabase = %v, %v; want created", created, err)
	}
	pool, err := store.Open(ctx, u.String(), store.Pool{})
	if err != nil {
		t.Fatal(err)
	}
	pool.Close()
	if created, err := store.EnsureDatabase(ctx, u.String()); err != nil || created {
		t.Fatalf("second EnsureDatabase = %v, %v; want existing", created, err)
	}
	admin := pgtest.Pool(t)
	if _, err := admin.Exec(ctx, "DROP DATABASE "+strings.TrimPrefix(u.Path, "/")+" WITH (FORCE)"); err != nil {
		t.Fatal(err)
	}
}

// A connection failure names the server but never the password.
func TestOpenErrorHasNoPassword(t *testing.T) {
	t.Parallel()
	_, err := store.Open(t.Context(), "postgres://herald:hunter2@127.0.0.1:1/herald?connect_timeout=1", store.Pool{})
	if err == nil {
		t.Fatal("want an error for a closed port")
	}
	if strings.Contains(err.Error(), "hunter2") {
		t.Errorf("error leaks the password: %v", err)
	}
	if _, err := store.Open(t.Context(), "postgres://herald:hunter2@[::1", store.Pool{}); err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("bad URL error = %v", err)
	}
}
