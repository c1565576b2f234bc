package pgserver_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/herald-bot/herald/internal/testsupport/pgtest"
)

// TestClusterStopAndStart runs a real throwaway cluster; under root it must
// run as an unprivileged user, which initdb and postgres insist on.
func TestClusterStopAndStart(t *testing.T) {
	t.Parallel()
	c := pgtest.StartCluster(t).Server

	if err := ping(t.Context(), c.URL()); err != nil {
		t.Fatalf("new cluster does not answer: %v", err)
	}
	fi, err := os.Stat(c.DataDir())
	if err != nil {
		t.Fatal(err)
	}
	if owner := fi.Sys().(*syscall.Stat_t).Uid; owner == 0 {
		t.Fatalf("data directory belongs to root; the server must run unprivileged")
	}
	open, err := pgx.Connect(t.Context(), c.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer open.Close(context.Background())

	must(t, c.Stop(t.Context()))
	if err := open.Ping(t.Context()); err == nil {
		t.Fatal("connection opened before Stop still works")
	}
	if err := ping(t.Context(), c.URL()); err == nil {
		t.Fatal("stopped cluster still accepts connections")
	}

	must(t, c.Start(t.Context()))
	if err := ping(t.Context(), c.URL()); err != nil {
		t.Fatalf("restarted cluster does not answer: %v", err)
	}
}

// TestClusterCrash crashes a cluster with a transaction open: what was
// committed survives crash recovery, the open transaction does not, and the
// same URL serves again as soon as Start returns.
func TestClusterCrash(t *testing.T) {
	t.Parallel()
	c := pgtest.StartCluster(t).Server
	ctx := t.Context()
	conn, err := pgx.Connect(ctx, c.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	for _, sql := range []string{
		"CREATE TABLE notes (body text)",
		"INSERT INTO notes VALUES ('committed')",
		"BEGIN",
		"INSERT INTO notes VALUES ('in flight')",
	} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}

	must(t, c.Crash(t.Context()))
	if err := conn.Ping(ctx); err == nil {
		t.Fatal("connection opened before Crash still works")
	}
	if err := ping(ctx, c.URL()); err == nil {
		t.Fatal("crashed cluster still accepts connections")
	}

	must(t, c.Start(t.Context()))
	// No retry: Start returns only once the server accepts connections.
	after, err := pgx.Connect(ctx, c.URL())
	if err != nil {
		t.Fatalf("connect right after Start: %v", err)
	}
	defer after.Close(context.Background())
	rows, _ := after.Query(ctx, "SELECT body FROM notes")
	bodies, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if len(bodies) != 1 || bodies[0] != "committed" {
		t.Fatalf("notes after the crash = %q, want only the committed one", bodies)
	}
	log, err := os.ReadFile(filepath.Join(filepath.Dir(c.DataDir()), "postgres.log"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(log, []byte("automatic recovery in progress")) {
		t.Fatalf("server log shows no crash recovery, so Crash shut down cleanly:\n%s", c.LogTail())
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func ping(ctx context.Context, url string) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	return conn.Ping(ctx)
}
