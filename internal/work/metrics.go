package work

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/herald-bot/herald/internal/store"
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
	reg.MustRegister(m.outcomes, m.waits, m.attempts, store.Gauges(depth, depthTTL, laneDepth(pool, depth)))
	return m
}

// depthTTL is how long one count of River's table serves scrapes, so
// scraping often costs no more than one GROUP BY per ttl.
const depthTTL = 10 * time.Second

// laneDepth reads queue depth per lane and state from River's table.
func laneDepth(pool *pgxpool.Pool, desc *prometheus.Desc) func(context.Context) ([]prometheus.Metric, error) {
	return func(ctx context.Context) ([]prometheus.Metric, error) {
		rows, err := pool.Query(ctx, `SELECT `+LaneOfQueue+`, state::text, count(*) FROM river_job
		WHERE state IN ('available', 'scheduled', 'retryable', 'pending') GROUP BY 1, 2`)
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
			out = append(out, prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, float64(n), lane, state))
		}
		return out, rows.Err()
	}
}
