package webhookproxy

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/herald-bot/herald/internal/store/storetest"
	"github.com/herald-bot/herald/internal/webhookproxy/execute"
	"github.com/herald-bot/herald/internal/work"
)

// Requests waiting together are stored in one transaction, each target's
// in the order they came, with one drain job per target; a target at its
// bound refuses the rest of the group and keeps the others.
func TestGroupCommit(t *testing.T) {
	t.Parallel()
	db := storetest.Pool(t)
	jobs, err := work.NewClient(db, work.Options{})
	if err != nil {
		t.Fatal(err)
	}
	batch := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "batch"})
	a := newAcceptor(db, jobs, batch, roomy(quotas{hookRows: 15}))
	const n = 20
	results := make([]chan acceptResult, n)
	for i := range n {
		target := "1100000000000000001"
		if i%2 == 1 {
			target = "1100000000000000002"
		}
		it := &acceptItem{d: delivery{target: target, webhookID: target, token: "tok", contentType: "application/json",
			service: []string{"ci", "alerts", "ci"}[i%3], body: []byte(`{"content":"` + strings.Repeat("x", i) + `"}`)},
			done: make(chan acceptResult, 1)}
		a.queueOf(it.d) <- it
		results[i] = it.done
	}
	ctx, cancel := context.WithCancel(t.Context())
	stopped := make(chan struct{})
	go func() { a.run(ctx); close(stopped) }()
	t.Cleanup(func() { cancel(); <-stopped })

	var last [2]int64
	for i, ch := range results {
		r := <-ch
		if r.err != nil {
			t.Fatalf("delivery %d: %v", i, r.err)
		}
		if r.id <= last[i%2] {
			t.Errorf("delivery %d got id %d after %d: out of order", i, r.id, last[i%2])
		}
		last[i%2] = r.id
	}
	// Rows one transaction wrote share its id (xmin): one per writer the
	// two targets' deliveries went to.
	writers := 1
	if a.queueOf(delivery{target: "1100000000000000001"}) != a.queueOf(delivery{target: "1100000000000000002"}) {
		writers = 2
	}
	var txs, drains int
	db.QueryRow(t.Context(), `SELECT count(DISTINCT xmin::text) FROM webhookproxy_deliveries`).Scan(&txs)
	db.QueryRow(t.Context(), `SELECT count(*) FROM river_job WHERE kind = 'webhookproxy_drain'`).Scan(&drains)
	if txs != writers || drains != 2 {
		t.Errorf("%d transactions and %d drain jobs, want %d and 2", txs, drains, writers)
	}

	// Ten more for the first webhook: its bound (15) takes five.
	var full int
	for range 10 {
		_, err := a.accept(t.Context(), delivery{target: "1100000000000000001", webhookID: "1100000000000000001", token: "tok",
			contentType: "application/json", body: []byte(`{"content":"x"}`)})
		var apiErr *execute.Error
		if errors.As(err, &apiErr) && apiErr.Status == 429 {
			full++
		} else if err != nil {
			t.Fatal(err)
		}
	}
	if full != 5 {
		t.Errorf("%d refused as full, want 5", full)
	}
	db.QueryRow(t.Context(), `SELECT count(*) FROM river_job WHERE kind = 'webhookproxy_drain'`).Scan(&drains)
	if drains != 2 {
		t.Errorf("%d drain jobs, want still 2: a target with a live job gets none", drains)
	}
	checkUsage(t, db, 25)
}

// checkUsage fails t unless the usage the quotas read is, scope by scope,
// the rows and body bytes pending in the deliveries, of which there are
// pending.
func checkUsage(t *testing.T, db *pgxpool.Pool, pending int) {
	t.Helper()
	var n int
	if err := db.QueryRow(t.Context(), `SELECT count(*) FROM webhookproxy_deliveries WHERE state = 'pending'`).Scan(&n); err != nil || n != pending {
		t.Fatalf("%d deliveries pending (%v), want %d", n, err, pending)
	}
	rows, err := db.Query(t.Context(), `
		WITH pending AS (SELECT service, webhook_id, octet_length(coalesce(body, ''))::bigint AS size
				FROM webhookproxy_deliveries WHERE state = 'pending'),
			want AS (SELECT scope, count(*)::bigint AS rows, sum(size)::bigint AS bytes FROM (
				SELECT 'key:' || service AS scope, size FROM pending
				UNION ALL SELECT 'webhook:' || webhook_id, size FROM pending) d GROUP BY scope),
			got AS (SELECT scope, sum(rows)::bigint AS rows, sum(bytes)::bigint AS bytes FROM webhookproxy_usage GROUP BY scope)
		SELECT scope, coalesce(w.rows, 0), coalesce(g.rows, 0), coalesce(w.bytes, 0), coalesce(g.bytes, 0)
		FROM want w FULL JOIN got g USING (scope)
		WHERE coalesce(w.rows, 0) <> coalesce(g.rows, 0) OR coalesce(w.bytes, 0) <> coalesce(g.bytes, 0)`)
	if err != nil {
		t.Fatal(err)
	}
	var scope string
	var wantRows, gotRows, wantBytes, gotBytes int64
	_, err = pgx.ForEachRow(rows, []any{&scope, &wantRows, &gotRows, &wantBytes, &gotBytes}, func() error {
		t.Errorf("usage of %s: %d rows, %d bytes; pending: %d rows, %d bytes", scope, gotRows, gotBytes, wantRows, wantBytes)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A request whose caller gave up before any transaction took it is never
// written: its caller was told it was not stored.
func TestWithdrawnRequestNotWritten(t *testing.T) {
	t.Parallel()
	db := storetest.Pool(t)
	jobs, err := work.NewClient(db, work.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a := newAcceptor(db, jobs, prometheus.NewHistogram(prometheus.HistogramOpts{Name: "batch"}), roomy(quotas{}))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	d := delivery{target: "1", webhookID: "1", token: "t", contentType: "application/json", body: []byte(`{"content":"x"}`)}
	// Queued while no writer runs, withdrawn by its caller.
	it := &acceptItem{d: d, done: make(chan acceptResult, 1)}
	a.queueOf(d) <- it
	it.state.CompareAndSwap(itemQueued, itemAbandoned)
	if _, err := a.accept(ctx, d); err == nil {
		t.Fatal("a cancelled caller got an id")
	}
	rctx, stop := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { a.run(rctx); close(done) }()
	if _, err := a.accept(t.Context(), delivery{target: "2", webhookID: "2", token: "t", contentType: "application/json", body: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	stop()
	<-done
	var n int
	db.QueryRow(t.Context(), `SELECT count(*) FROM webhookproxy_deliveries WHERE target = '1'`).Scan(&n)
	if n != 0 {
		t.Errorf("%d withdrawn requests written", n)
	}
}

// roomy is q with every bound it leaves at zero set far past any test's.
func roomy(q quotas) quotas {
	for _, f := range []*int64{&q.keyRows, &q.keyBytes, &q.hookRows, &q.hookBytes, &q.totalRows, &q.totalBytes} {
		if *f == 0 {
			*f = 1 << 40
		}
	}
	if q.threads == 0 {
		q.threads = 1000
	}
	return q
}

// One request Postgres refuses (here a GitHub event header that is not
// UTF-8) fails alone: the others grouped with it are stored.
func TestOneFailureKeepsTheGroup(t *testing.T) {
	t.Parallel()
	db := storetest.Pool(t)
	jobs, err := work.NewClient(db, work.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a := newAcceptor(db, jobs, prometheus.NewHistogram(prometheus.HistogramOpts{Name: "batch"}), roomy(quotas{}))
	var items []*acceptItem
	for i := range 5 {
		d := delivery{target: "1", webhookID: "1", token: "t", variant: "github", contentType: "application/json", body: []byte(`{}`)}
		if i == 2 {
			d.event = "push\xff"
		}
		items = append(items, &acceptItem{d: d, done: make(chan acceptResult, 1)})
	}
	a.write(items)
	var failed []int
	for i, it := range items {
		if r := <-it.done; r.err != nil {
			failed = append(failed, i)
		}
	}
	var stored int
	db.QueryRow(t.Context(), `SELECT count(*) FROM webhookproxy_deliveries`).Scan(&stored)
	if len(failed) != 1 || failed[0] != 2 || stored != 4 {
		t.Errorf("failed %v with %d stored, want only request 2 failed and 4 stored", failed, stored)
	}
}
