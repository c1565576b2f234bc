package work

import (
	"context"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
)

// metrics count what the outcome middleware decides, by job kind and
// reason — never by ids.
type metrics struct {
	outcomes *prometheus.CounterVec
	waits    *prometheus.HistogramVec
	attempts *prometheus.HistogramVec
}

func newMetrics(reg prometheus.Registerer, pool *pgxpool.Pool) *metrics {
	m := &metrics{
		outcomes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "herald_job_outcomes_total", Help: "Job attempts by kind and outcome (done, rate_limited, needs_permission, target_missing, invalid, expired, retry).",
		}, []string{"kind", "outcome"}),
		waits: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "herald_job_wait_seconds", Help: "How long jobs were snoozed for Discord's rate limits, by kind.",
			Buckets: []float64{.05, .25, 1, 5, 15, 60, 300, 3600},
		}, []string{"kind"}),
		attempts: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "herald_job_attempts", Help: "Attempts a job took when it finished, by kind.",
			Buckets: []float64{1, 2, 3, 5, 10, 25},
		}, []string{"kind"}),
	}
	if reg == nil {
		return m
	}
	depth := prometheus.NewDesc("herald_lane_queue_depth", "Jobs waiting to run in each lane (available, or scheduled: held, snoozed, retrying).", []string{"lane", "state"}, nil)
	reg.MustRegister(m.outcomes, m.waits, m.attempts, &laneDepth{pool: pool, desc: depth})
	return m
}

// depthTTL is how long one count of River's table serves scrapes, so
// scraping often costs no more than one GROUP BY per ttl.
const depthTTL = 10 * time.Second

// laneDepth reads queue depth per lane from River's table, at most once
// per depthTTL.
type laneDepth struct {
	pool *pgxpool.Pool
	desc *prometheus.Desc

	mu      sync.Mutex
	counted time.Time
	last    []prometheus.Metric
}

func (l *laneDepth) Describe(ch chan<- *prometheus.Desc) { ch <- l.desc }

func (l *laneDepth) Collect(ch chan<- prometheus.Metric) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if time.Since(l.counted) >= depthTTL {
		metrics, err := l.count()
		if err != nil {
			ch <- prometheus.NewInvalidMetric(l.desc, err)
			return
		}
		l.last, l.counted = metrics, time.Now()
	}
	for _, m := range l.last {
		ch <- m
	}
}

func (l *laneDepth) count() ([]prometheus.Metric, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	rows, err := l.pool.Query(ctx, `SELECT queue, state::text, count(*) FROM river_job
		WHERE state IN ('available', 'scheduled', 'retryable', 'pending') GROUP BY queue, state`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []prometheus.Metric
	for rows.Next() {
		var lane, state string
		var n int64
		if err := rows.Scan(&lane, &state, &n); err != nil {
			return nil, err
		}
		out = append(out, prometheus.MustNewConstMetric(l.desc, prometheus.GaugeValue, float64(n), lane, state))
	}
	return out, rows.Err()
}
