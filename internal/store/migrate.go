package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/herald-bot/herald/internal/logging"
	"github.com/herald-bot/herald/migrations"
)

// migrationLock is the advisory lock key that serialises concurrent
// `herald migrate` runs (a Kubernetes Job racing an auto-migrating pod).
const migrationLock = 0x6865_7261_6c64 // "herald"

// ErrPending reports that the database schema is behind this binary.
var ErrPending = errors.New("store: migrations pending")

// Migrator applies and checks both schemas herald depends on: River's
// (through rivermigrate) and herald's own (migrations/*.sql through goose,
// chosen for embedded-FS support and its Postgres advisory locking).
type Migrator struct {
	pool  *pgxpool.Pool
	db    *sql.DB
	river *rivermigrate.Migrator[pgx.Tx]
	goose *goose.Provider
	log   *slog.Logger
}

// NewMigrator prepares both migration sets against pool.
func NewMigrator(pool *pgxpool.Pool, log *slog.Logger) (*Migrator, error) {
	// River's migrator logs every step at info; Up logs each applied
	// version once, so only River's warnings pass.
	rm, err := rivermigrate.New(riverpgxv5.New(pool), &rivermigrate.Config{Logger: logging.AtLeast(log, slog.LevelWarn)})
	if err != nil {
		return nil, fmt.Errorf("store: river migrator: %w", err)
	}
	db := stdlib.OpenDBFromPool(pool)
	gp, err := goose.NewProvider(goose.DialectPostgres, db, migrations.FS,
		goose.WithTableName("herald_schema_migrations"),
		goose.WithDisableGlobalRegistry(true),
		goose.WithSlog(log),
	)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("store: herald migrations: %w", err)
	}
	return &Migrator{pool: pool, db: db, river: rm, goose: gp, log: log}, nil
}

// Close releases the database/sql handle the goose provider uses; the pool
// itself stays open.
func (m *Migrator) Close() error { return m.db.Close() }

// Up applies every pending migration, River's first because herald's tables
// may reference River's. Running it again changes nothing.
func (m *Migrator) Up(ctx context.Context) error {
	conn, err := m.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("store: migrate: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", migrationLock); err != nil {
		return fmt.Errorf("store: migrate: take lock: %w", err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", migrationLock) //nolint:errcheck // the lock dies with the session anyway

	res, err := m.river.Migrate(ctx, rivermigrate.DirectionUp, nil)
	if err != nil {
		return fmt.Errorf("store: river migrations: %w", err)
	}
	for _, v := range res.Versions {
		m.log.InfoContext(ctx, "applied migration", "schema", "river", "version", v.Version, "name", v.Name, "took", v.Duration)
	}
	applied, err := m.goose.Up(ctx)
	if err != nil {
		return fmt.Errorf("store: herald migrations: %w", err)
	}
	for _, r := range applied {
		m.log.InfoContext(ctx, "applied migration", "schema", "herald", "version", r.Source.Version, "name", r.Source.Path, "took", r.Duration)
	}
	if len(res.Versions) == 0 && len(applied) == 0 {
		m.log.InfoContext(ctx, "database schema is current")
	}
	return nil
}

// Check returns nil when both schemas are current, an error wrapping
// ErrPending that names what is missing, or the error that stopped the check
// (for example an unreachable database).
func (m *Migrator) Check(ctx context.Context) error {
	rv, err := m.river.Validate(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: check river schema: %w", err)
	}
	current, target, err := m.goose.GetVersions(ctx)
	if err != nil {
		return fmt.Errorf("store: check herald schema: %w", err)
	}
	var missing []string
	if !rv.OK {
		missing = append(missing, "river: "+strings.Join(rv.Messages, "; "))
	}
	if current < target {
		missing = append(missing, fmt.Sprintf("herald: at version %d of %d", current, target))
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w (%s); run `herald migrate`", ErrPending, strings.Join(missing, ", "))
	}
	return nil
}
