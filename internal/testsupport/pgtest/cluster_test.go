package pgtest

import (
	"bytes"
	"context"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestClusterStopAndStart runs a real throwaway cluster; under root it must
// run as an unprivileged user, which initdb and postgres insist on.
func TestClusterStopAndStart(t *testing.T) {
	t.Parallel()
	c := StartCluster(t)

	if err := ping(t.Context(), c.URL()); err != nil {
		t.Fatalf("new cluster does not answer: %v", err)
	}
	fi, err := os.Stat(c.dataDir())
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

	c.Stop(t)
	if err := open.Ping(t.Context()); err == nil {
		t.Fatal("connection opened before Stop still works")
	}
	if err := ping(t.Context(), c.URL()); err == nil {
		t.Fatal("stopped cluster still accepts connections")
	}

	c.Start(t)
	if err := ping(t.Context(), c.URL()); err != nil {
		t.Fatalf("restarted cluster does not answer: %v", err)
	}

	// The same cluster then serves a process that found no other server,
	// which must clone templates from it and remove it on shutdown.
	p := newProcess(resolver{
		getenv:       env(map[string]string{"PATH": fakeBinDir(t)}),
		defaultURL:   unreachableURL(t),
		probeTimeout: 5 * time.Second,
		startCluster: func(context.Context, string) (*Cluster, error) { return c, nil },
	})
	p.inMain = true
	tpl := &Template{Name: "seeded", Setup: func(ctx context.Context, url string) error {
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			return err
		}
		// Left open on purpose: cloning must not depend on Setup's manners.
		_, err = conn.Exec(ctx, "CREATE TABLE seeded (id int)")
		return err
	}}
	name, url, err := p.createDatabase(t.Context(), tpl)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := conn.QueryRow(t.Context(), "SELECT count(*) FROM seeded").Scan(&n); err != nil {
		t.Fatalf("clone of the template on the throwaway cluster: %v", err)
	}
	conn.Close(t.Context())
	if err := p.dropDatabase(t.Context(), name); err != nil {
		t.Fatal(err)
	}
	if err := p.shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(c.dir); !os.IsNotExist(err) {
		t.Fatalf("cluster directory after shutdown: %v, want it removed", err)
	}
}

// TestClusterCrash crashes a cluster with a transaction open: what was
// committed survives crash recovery, the open transaction does not, and the
// same URL serves again as soon as Start returns.
func TestClusterCrash(t *testing.T) {
	t.Parallel()
	c := StartCluster(t)
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

	c.Crash(t)
	if err := conn.Ping(ctx); err == nil {
		t.Fatal("connection opened before Crash still works")
	}
	if err := ping(ctx, c.URL()); err == nil {
		t.Fatal("crashed cluster still accepts connections")
	}

	c.Start(t)
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
	log, err := os.ReadFile(c.logFile())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(log, []byte("automatic recovery in progress")) {
		t.Fatalf("server log shows no crash recovery, so Crash shut down cleanly:\n%s", c.logTail())
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
