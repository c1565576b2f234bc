package work

import (
	"context"
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
	reg.MustRegister(m.outcomes, m.waits, m.attempts, laneDepth{pool: pool, desc: depth})
	return m
}

// laneDepth reads queue depth per lane from River's table at scrape time.
type laneDepth struct {
	pool *pgxpool.Pool
	desc *prometheus.Desc
}

func (l laneDepth) Describe(ch chan<- *prometheus.Desc) { ch <- l.desc }

func (l laneDepth) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	rows, err := l.pool.Query(ctx, `SELECT queue, state::text, count(*) FROM river_job
		WHERE state IN ('available', 'scheduled', 'retryable', 'pending') GROUP BY queue, state`)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(l.desc, err)
		return
	}
	defer rows.Close()
	for rows.Next() {
		var lane, state string
		var n int64
		if err := rows.Scan(&lane, &state, &n); err != nil {
			ch <- prometheus.NewInvalidMetric(l.desc, err)
			return
		}
		ch <- prometheus.MustNewConstMetric(l.desc, prometheus.GaugeValue, float64(n), lane, state)
	}
}
