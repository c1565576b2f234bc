// Package storetest gives tests a database with herald's whole schema
// (River's and herald's own) already applied.
package storetest

import (
	"context"
	"log/slog"
	"net/url"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/herald-bot/herald/internal/store"
	"github.com/herald-bot/herald/internal/testsupport/pgtest"
	"github.com/herald-bot/herald/internal/testsupport/tcpproxy"
)

// Migrated is migrated once per test process and cloned for each test.
var Migrated = &pgtest.Template{Name: "migrated", Setup: migrate}

func migrate(ctx context.Context, url string) error {
	pool, err := store.Open(ctx, url, store.Pool{})
	if err != nil {
		return err
	}
	defer pool.Close()
	m, err := store.NewMigrator(pool, slog.New(slog.DiscardHandler))
	if err != nil {
		return err
	}
	defer m.Close()
	return m.Up(ctx)
}

// Pool returns a pool on a new, fully migrated database owned by t.
func Pool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	return pgtest.PoolFrom(t, Migrated)
}

// URL returns the URL of a new, fully migrated database owned by t.
func URL(t testing.TB) string {
	t.Helper()
	return pgtest.URLFrom(t, Migrated)
}

// BehindProxy returns the URL of a new, fully migrated database owned by
// t, reached through a TCP proxy of the test's own, which cuts it off on
// demand without stopping the shared server.
func BehindProxy(t testing.TB) (string, *tcpproxy.Proxy) {
	t.Helper()
	u, err := url.Parse(URL(t))
	if err != nil {
		t.Fatal(err)
	}
	proxy := tcpproxy.Start(t, u.Host)
	u.Host = proxy.Addr()
	return u.String(), proxy
}
