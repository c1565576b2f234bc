package pgtest

import (
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
