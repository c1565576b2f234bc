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

// StatisticsEvery is how often herald looks for grown tables.
const StatisticsEvery = 2 * time.Second

// growthFloor is the rows below which no table is worth analyzing: the
// planner takes a never-analyzed table for 10 pages anyway.
const growthFloor = 50

// KeepStatistics analyzes those of tables (in the pool's current schema,
// owned by its user) that grew past twice their size at their last
// analyze, once each interval until ctx ends.
//
// Why herald does what autovacuum does: a table that goes from empty to
// thousands of rows in seconds (a burst of clicks fills river_job) keeps
// each statement's cached generic plan, chosen while it looked empty,
// until it is analyzed. A River completion of four jobs then seq-scanned
// 6,000 rows twice: 7.9 ms on average against 1.2 ms with a current
// plan, and most of Postgres' time in a burst. Autovacuum looks once a
// minute, or never when it is off. Growth is what turns such a plan
// wrong, so growth is the rule: a table updated in place keeps its plans,
// and one that grows is analyzed about log2(size) times on its way up,
// then no more. A table autovacuum is working on is skipped for the round.
func KeepStatistics(ctx context.Context, db *pgxpool.Pool, log *slog.Logger, interval time.Duration, tables ...string) {
	var on bool
	if err := db.QueryRow(ctx, `SELECT current_setting('autovacuum')::bool`).Scan(&on); err == nil && !on {
		log.WarnContext(ctx, "Postgres runs with autovacuum off: herald keeps River's job table's planner statistics itself, but nothing removes dead rows; turn autovacuum on or run VACUUM regularly")
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		grown, err := AnalyzeGrown(ctx, db, tables...)
		switch {
		case err != nil && ctx.Err() == nil:
			log.WarnContext(ctx, "store: planner statistics", "err", err)
		case len(grown) > 0:
			log.DebugContext(ctx, "store: analyzed", "tables", grown)
		}
	}
}

// AnalyzeGrown analyzes, in one transaction, those of tables that grew
// and returns their names. One process of several on the database does
// it at a time; the others find nothing left, or skip the round while it
// works.
func AnalyzeGrown(ctx context.Context, db *pgxpool.Pool, tables ...string) ([]string, error) {
	var grown []string
	err := pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
		var mine bool
		if err := tx.QueryRow(ctx, `SELECT pg_try_advisory_xact_lock(hashtext('herald_statistics:' || current_schema()))`).Scan(&mine); err != nil || !mine {
			return err
		}
		rows, err := tx.Query(ctx, `
			SELECT quote_ident(s.relname) FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
			WHERE s.schemaname = current_schema() AND s.relname = ANY($2) AND pg_has_role(c.relowner, 'USAGE')
				AND s.n_live_tup > 2 * greatest(c.reltuples, 0) + $1
			ORDER BY 1`, growthFloor, tables)
		if err != nil {
			return err
		}
		if grown, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil || len(grown) == 0 {
			return err
		}
		// A table autovacuum (or an admin) is analyzing or vacuuming holds
		// the lock ANALYZE needs: better this round skipped than a wait.
		if _, err := tx.Exec(ctx, `SET LOCAL lock_timeout = '200ms'`); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, "ANALYZE "+strings.Join(grown, ", "))
		return err
	})
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "55P03" { // lock_not_available
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: analyze grown tables: %w", err)
	}
	return grown, nil
}
