// Package store owns herald's Postgres connection pool and schema: the pool
// every component shares, and the migrations (herald's own and River's) that
// `herald migrate` applies, the gauges read from its tables, and their
// planner statistics kept current.
package store

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Pool shapes a pool: at most Max connections (0: pgx's default,
// max(4, CPUs)), with Min kept open so the first query after an idle
// spell does not pay for a new connection. Name is its application_name
// (unless the URL sets one), so pg_stat_activity tells herald's pools
// apart.
type Pool struct {
	Name     string
	Max, Min int32
}

// Open connects a pool shaped by p to url and checks that the database
// answers. Errors never contain the URL, which may hold a password.
func Open(ctx context.Context, url string, p Pool) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, errors.New("store: DATABASE_URL is not a valid Postgres URL")
	}
	if p.Max > 0 {
		cfg.MaxConns = p.Max
	}
	cfg.MinConns = min(p.Min, cfg.MaxConns)
	if _, set := cfg.ConnConfig.RuntimeParams["application_name"]; !set && p.Name != "" {
		cfg.ConnConfig.RuntimeParams["application_name"] = p.Name
	}
	// Health checks find a dead server quickly, so /readyz and River notice
	// an outage within seconds rather than at the next query.
	cfg.HealthCheckPeriod = 5 * time.Second
	cfg.ConnConfig.ConnectTimeout = 5 * time.Second
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("store: open pool: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("store: ping %s: %w", describe(cfg.ConnConfig), err)
	}
	return pool, nil
}

// EnsureDatabase creates the database named in url when the server says it
// does not exist, so a fresh machine needs no manual `createdb`. It connects
// to the server's maintenance database "postgres" with the same credentials.
func EnsureDatabase(ctx context.Context, url string) (created bool, err error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return false, errors.New("store: DATABASE_URL is not a valid Postgres URL")
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err == nil {
		return false, conn.Close(ctx)
	}
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "3D000" { // invalid_catalog_name
		return false, fmt.Errorf("store: connect to %s: %w", describe(cfg), err)
	}
	name := cfg.Database
	admin := cfg.Copy()
	admin.Database = "postgres"
	conn, err = pgx.ConnectConfig(ctx, admin)
	if err != nil {
		return false, fmt.Errorf("store: connect to %s to create database %q: %w", describe(admin), name, err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return false, fmt.Errorf("store: create database %q: %w", name, err)
	}
	return true, nil
}

// describe names a server and database for error messages without any
// credentials.
func describe(c *pgx.ConnConfig) string {
	u := url.URL{Scheme: "postgres", Host: fmt.Sprintf("%s:%d", c.Host, c.Port), Path: "/" + c.Database}
	if c.User != "" {
		u.User = url.User(c.User)
	}
	return strings.TrimPrefix(u.String(), "postgres://")
}
