package pgtest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/herald-bot/herald/internal/pgserver"
)

// noCluster fails the test if the resolver tries to start a cluster.
func noCluster(t *testing.T) func(context.Context, string) (*pgserver.Cluster, error) {
	return func(_ context.Context, dir string) (*pgserver.Cluster, error) {
		t.Errorf("resolver started a cluster from %s", dir)
		return nil, errors.New("no cluster expected")
	}
}

func TestServerIsResolvedOncePerProcess(t *testing.T) {
	t.Parallel()
	var lookups atomic.Int32
	p := newProcess(pgserver.Resolver{
		Getenv: func(k string) string {
			if k == "DATABASE_URL" {
				lookups.Add(1)
			}
			return ""
		},
		DefaultURL:   RefusedURL(t),
		ProbeTimeout: 5 * time.Second,
		StartCluster: noCluster(t),
	})
	p.inMain = true
	for range 3 {
		if _, err := p.server(t.Context()); err == nil {
			t.Fatal("server succeeded with nothing to resolve to")
		}
	}
	if got := lookups.Load(); got != 1 {
		t.Fatalf("resolved %d times, want 1", got)
	}
}

func TestServerRequiresMain(t *testing.T) {
	t.Parallel()
	p := newProcess(pgserver.Resolver{Getenv: func(string) string { return "" }, StartCluster: noCluster(t)})
	_, _, err := p.createDatabase(t.Context(), nil)
	if err == nil || !strings.Contains(err.Error(), "pgtest.Main(m)") {
		t.Fatalf("createDatabase outside Main: error %v, want one naming pgtest.Main(m)", err)
	}
}

// A process that found no other server uses a throwaway cluster: it clones
// templates from it and removes it on shutdown.
func TestProcessOnThrowawayCluster(t *testing.T) {
	t.Parallel()
	c, err := pgserver.StartCluster(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	p := newProcess(pgserver.Resolver{
		Getenv:       func(k string) string { return map[string]string{"PATH": os.Getenv("PATH")}[k] },
		BinGlobs:     []string{pgserver.BinGlob},
		DefaultURL:   RefusedURL(t),
		ProbeTimeout: 5 * time.Second,
		StartCluster: func(context.Context, string) (*pgserver.Cluster, error) { return c, nil },
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
	p.dropLater(name)
	if err := p.waitDrops(); err != nil {
		t.Fatal(err)
	}
	var left int
	if err := p.admin.QueryRow(t.Context(), "SELECT count(*) FROM pg_database WHERE datname = $1", name).Scan(&left); err != nil || left != 0 {
		t.Fatalf("database %s after its drop: %d left (%v), want none", name, left, err)
	}
	if err := p.shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Dir(c.DataDir())); !os.IsNotExist(err) {
		t.Fatalf("cluster directory after shutdown: %v, want it removed", err)
	}
}
