package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// StatisticsEvery is how often KeepStatistics looks for stale tables.
const StatisticsEvery = 2 * time.Second

// KeepStatistics analyzes herald's tables (those of the pool's current
// schema that its user owns) whose statistics went stale, every
// StatisticsEvery until ctx ends.
//
// Why herald does what autovacuum does: its hot tables go from empty to
// thousands of rows in seconds (a burst of clicks fills river_job), and a
// statement's cached generic plan, chosen while a table looked empty,
// stays until the table is analyzed. A River completion of four jobs then
// seq-scanned 6,000 rows twice: 7.9 ms on average against 1.4 ms with a
// current plan, and most of Postgres' time in a burst. Autovacuum uses
// the same rule (autovacuum_analyze_threshold plus
// autovacuum_analyze_scale_factor of the rows changed since the last
// analyze) but looks once a minute, or never when it is off; a table it
// is working on is skipped here.
func KeepStatistics(ctx context.Context, db *pgxpool.Pool, log *slog.Logger) {
	var on bool
	if err := db.QueryRow(ctx, `SELECT current_setting('autovacuum')::bool`).Scan(&on); err == nil && !on {
		log.WarnContext(ctx, "Postgres runs with autovacuum off: herald keeps its tables' planner statistics itself, but nothing removes their dead rows; turn autovacuum on or run VACUUM regularly")
	}
	t := time.NewTicker(StatisticsEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		tables, err := AnalyzeStale(ctx, db)
		switch {
		case err != nil && ctx.Err() == nil:
			log.WarnContext(ctx, "store: planner statistics", "err", err)
		case len(tables) > 0:
			log.DebugContext(ctx, "store: analyzed", "tables", tables)
		}
	}
}

// AnalyzeStale analyzes, in one transaction, the stale tables of the
// pool's current schema and returns their names. One process of several
// on the database does it at a time; the others find nothing left, or
// skip the round while it works.
func AnalyzeStale(ctx context.Context, db *pgxpool.Pool) ([]string, error) {
	var tables []string
	err := pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
		var mine bool
		if err := tx.QueryRow(ctx, `SELECT pg_try_advisory_xact_lock(hashtext('herald_statistics:' || current_schema()))`).Scan(&mine); err != nil || !mine {
			return err
		}
		rows, err := tx.Query(ctx, `
			SELECT quote_ident(s.relname) FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
			WHERE s.schemaname = current_schema() AND pg_has_role(c.relowner, 'USAGE')
				AND s.n_mod_since_analyze > current_setting('autovacuum_analyze_threshold')::float8
					+ current_setting('autovacuum_analyze_scale_factor')::float8 * greatest(c.reltuples, 0)
			ORDER BY 1`)
		if err != nil {
			return err
		}
		if tables, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil || len(tables) == 0 {
			return err
		}
		// A table autovacuum (or an admin) is analyzing or vacuuming holds
		// the lock ANALYZE needs: better this round skipped than a wait.
		if _, err := tx.Exec(ctx, `SET LOCAL lock_timeout = '200ms'`); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, "ANALYZE "+strings.Join(tables, ", "))
		return err
	})
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "55P03" { // lock_not_available
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: analyze stale tables: %w", err)
	}
	return tables, nil
}
