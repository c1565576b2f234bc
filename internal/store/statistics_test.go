package store_test

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/herald-bot/herald/internal/store"
	"github.com/herald-bot/herald/internal/testsupport/logbuf"
	"github.com/herald-bot/herald/internal/testsupport/pgtest"
	"github.com/herald-bot/herald/internal/testsupport/wait"
)

// A statement's generic plan, made while its table held three rows, still
// seq-scans the table after it grew to 20,000; AnalyzeGrown finds the
// table, and the plan is made again, with the primary key's index. The
// statement is shaped like River's completion: a join with an array of ids.
func TestAnalyzeGrownRefreshesCachedPlans(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool := pgtest.Pool(t)
	run(t, pool,
		`CREATE TABLE jobs (id bigint PRIMARY KEY, args text NOT NULL)`,
		`INSERT INTO jobs SELECT i, repeat('x', 200) FROM generate_series(1, 3) i`,
		`ANALYZE jobs`)
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	for _, q := range []string{
		`SET plan_cache_mode = force_generic_plan`,
		`PREPARE finish (bigint[]) AS UPDATE jobs SET args = 'done' FROM unnest($1::bigint[]) AS i(id) WHERE jobs.id = i.id`,
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	plan := func() string {
		t.Helper()
		rows, err := conn.Query(ctx, `EXPLAIN EXECUTE finish('{1,2,3}')`)
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		for rows.Next() {
			var l string
			if err := rows.Scan(&l); err != nil {
				t.Fatal(err)
			}
			lines = append(lines, l)
		}
		if rows.Err() != nil {
			t.Fatal(rows.Err())
		}
		return strings.Join(lines, "\n")
	}
	if p := plan(); !strings.Contains(p, "Seq Scan on jobs") {
		t.Fatalf("three rows: the generic plan should scan the table:\n%s", p)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO jobs SELECT i, repeat('x', 200) FROM generate_series(4, 20000) i`); err != nil {
		t.Fatal(err)
	}
	if p := plan(); !strings.Contains(p, "Seq Scan on jobs") {
		t.Fatalf("the cached plan should outlive the growth until an analyze:\n%s", p)
	}

	// The inserting session reports its changes within a second or so.
	var analyzed []string
	wait.Within(t, 10*time.Second, "AnalyzeGrown to find the grown table", func() bool {
		tables, err := store.AnalyzeGrown(ctx, pool, "jobs", "counters", "grown")
		if err != nil {
			t.Fatal(err)
		}
		analyzed = append(analyzed, tables...)
		return slices.Contains(analyzed, "jobs")
	})
	if p := plan(); !strings.Contains(p, "Index Scan using jobs_pkey") {
		t.Errorf("after the analyze the plan should use the primary key:\n%s", p)
	}
	if tables, err := store.AnalyzeGrown(ctx, pool, "jobs", "counters", "grown"); err != nil || len(tables) > 0 {
		t.Errorf("a second round analyzed %v (err %v), want nothing: the statistics are current", tables, err)
	}
}

// While one process holds the round's lock, another skips the round
// rather than analyzing the same tables twice.
func TestAnalyzeGrownSkipsWhileAnotherProcessWorks(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool := pgtest.Pool(t)
	if _, err := pool.Exec(ctx, `CREATE TABLE jobs (id bigint PRIMARY KEY); INSERT INTO jobs SELECT generate_series(1, 1000)`); err != nil {
		t.Fatal(err)
	}
	// The inserting session reports its changes within a second or so.
	wait.Within(t, 10*time.Second, "the insert to reach the statistics", func() bool {
		var n int64
		err := pool.QueryRow(ctx, `SELECT n_mod_since_analyze FROM pg_stat_user_tables WHERE relname = 'jobs'`).Scan(&n)
		return err == nil && n >= 1000
	})
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('herald_statistics:' || current_schema()))`); err != nil {
		t.Fatal(err)
	}
	other, err := pgxpool.New(ctx, pool.Config().ConnString())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	for range 3 {
		if tables, err := store.AnalyzeGrown(ctx, other, "jobs"); err != nil || len(tables) > 0 {
			t.Fatalf("with the lock held elsewhere AnalyzeGrown analyzed %v (err %v), want a skipped round", tables, err)
		}
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if tables, err := store.AnalyzeGrown(ctx, other, "jobs"); err != nil || !slices.Contains(tables, "jobs") {
		t.Errorf("with the lock free AnalyzeGrown analyzed %v (err %v), want jobs", tables, err)
	}
}

// A table updated in place, however often, keeps its statistics: its
// plans do not turn wrong, and analyzing it would only make every
// connection plan its statements again.
func TestAnalyzeGrownLeavesCountersAlone(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool := pgtest.Pool(t)
	run(t, pool,
		`CREATE TABLE counters (id int PRIMARY KEY, n bigint NOT NULL)`,
		`INSERT INTO counters VALUES (1, 0)`,
		`ANALYZE counters`,
		`CREATE TABLE grown (id int PRIMARY KEY)`)
	for range 500 {
		if _, err := pool.Exec(ctx, `UPDATE counters SET n = n + 1 WHERE id = 1`); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := pool.Exec(ctx, `INSERT INTO grown SELECT generate_series(1, 100)`); err != nil {
		t.Fatal(err)
	}
	wait.Within(t, 10*time.Second, "the changes to reach the statistics", func() bool {
		var mods, live int64
		err := pool.QueryRow(ctx, `SELECT
			(SELECT n_mod_since_analyze FROM pg_stat_user_tables WHERE relname = 'counters'),
			(SELECT n_live_tup FROM pg_stat_user_tables WHERE relname = 'grown')`).Scan(&mods, &live)
		return err == nil && mods >= 500 && live >= 100
	})
	analyzed, err := store.AnalyzeGrown(ctx, pool, "jobs", "counters", "grown")
	if err != nil || !slices.Equal(analyzed, []string{"grown"}) {
		t.Errorf("analyzed %v (err %v), want only grown: counters' 500 updates left its size as it was", analyzed, err)
	}
}

// KeepStatistics analyzes a table that grows, says at start whether
// autovacuum is off, and returns once its context ends.
func TestKeepStatisticsAnalyzesUntilStopped(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool := pgtest.Pool(t)
	if _, err := pool.Exec(ctx, `CREATE TABLE jobs (id bigint PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	var logs logbuf.Buffer
	kctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		store.KeepStatistics(kctx, pool, slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})), 10*time.Millisecond, "jobs")
		close(done)
	}()
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `INSERT INTO jobs SELECT generate_series(1, 1000)`); err != nil {
		t.Fatal(err)
	}
	// The log comes after the commit; Postgres counts the analyze before
	// it, so a stop at that count could roll the analyze back. An idle
	// session reports its inserts only after 10 s: a statement on it
	// reports them within a second.
	wait.Within(t, 10*time.Second, "the grown table's analyze logged", func() bool {
		if _, err := conn.Exec(ctx, `SELECT 1`); err != nil {
			t.Fatal(err)
		}
		return strings.Contains(logs.String(), "tables=[jobs]")
	})
	var analyzed int64
	if err := pool.QueryRow(ctx, `SELECT analyze_count FROM pg_stat_user_tables WHERE relname = 'jobs'`).Scan(&analyzed); err != nil || analyzed == 0 {
		t.Errorf("analyze_count of jobs = %d (err %v), want the logged analyze counted", analyzed, err)
	}
	stop()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("KeepStatistics did not return once its context ended")
	}
	var on bool
	if err := pool.QueryRow(ctx, `SELECT current_setting('autovacuum')::bool`).Scan(&on); err != nil {
		t.Fatal(err)
	}
	if warned := strings.Contains(logs.String(), "autovacuum off"); warned == on {
		t.Errorf("autovacuum on: %v, but the start warned: %v:\n%s", on, warned, logs.String())
	}
}

// run executes each statement on pool, failing the test at the first error.
func run(t *testing.T, pool *pgxpool.Pool, statements ...string) {
	t.Helper()
	for _, q := range statements {
		if _, err := pool.Exec(t.Context(), q); err != nil {
			t.Fatal(err)
		}
	}
}
