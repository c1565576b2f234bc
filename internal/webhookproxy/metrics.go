package webhookproxy

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/herald-bot/herald/internal/adminhttp"
)

// metrics are labelled by outcome and, for depth, by webhook id and
// thread — never by a token.
type metrics struct {
	accepted     prometheus.Counter
	refused      *prometheus.CounterVec
	delivered    prometheus.Counter
	retried      *prometheus.CounterVec
	deadLettered *prometheus.CounterVec
	reconciled   *prometheus.CounterVec
	latency      prometheus.Histogram
	batch        prometheus.Histogram
}

func newMetrics(reg prometheus.Registerer, db *pgxpool.Pool) *metrics {
	m := &metrics{
		accepted: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "herald_webhookproxy_accepted_total", Help: "Webhook requests stored for delivery.",
		}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "herald_webhookproxy_refused_total", Help: "Webhook requests refused, by reason (invalid, too_large, forbidden, queue_full, dead, unavailable).",
		}, []string{"reason"}),
		delivered: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "herald_webhookproxy_delivered_total", Help: "Deliveries Discord confirmed.",
		}),
		retried: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "herald_webhookproxy_retried_total", Help: "Delivery attempts that will be retried, by reason (rate_limited, transient, unknown_outcome, unauthorized).",
		}, []string{"reason"}),
		deadLettered: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "herald_webhookproxy_dead_lettered_total", Help: "Deliveries given up, by class (invalid, not_found, permission, dead, retries_exhausted).",
		}, []string{"class"}),
		reconciled: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "herald_webhookproxy_reconciled_total", Help: "Attempts with a lost answer, by what reading back found (found, absent, unknowable).",
		}, []string{"result"}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "herald_webhookproxy_delivery_seconds", Help: "Time from acceptance to Discord's confirmation.",
			Buckets: []float64{.05, .1, .25, .5, 1, 2.5, 5, 15, 60, 300, 3600},
		}),
		batch: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "herald_webhookproxy_accept_batch", Help: "Requests stored per transaction (group commit).",
			Buckets: []float64{1, 2, 5, 10, 25, 50, 100, 200},
		}),
	}
	if reg != nil {
		desc := prometheus.NewDesc("herald_webhookproxy_queue_depth", "Pending deliveries per target.", []string{"webhook_id", "thread_id"}, nil)
		reg.MustRegister(m.accepted, m.refused, m.delivered, m.retried, m.deadLettered, m.reconciled, m.latency, m.batch,
			adminhttp.Gauges(desc, depthTTL, depthOf(db, desc)))
	}
	return m
}

// depthTTL is how long one read of the targets serves scrapes.
const depthTTL = 5 * time.Second

// depthOf reads the depth of every non-empty target from the database,
// so it counts every herald's deliveries.
func depthOf(db *pgxpool.Pool, desc *prometheus.Desc) func(context.Context) ([]prometheus.Metric, error) {
	return func(ctx context.Context) ([]prometheus.Metric, error) {
		rows, err := db.Query(ctx, `SELECT webhook_id, thread_id, depth FROM webhookproxy_targets WHERE depth > 0`)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		var out []prometheus.Metric
		for rows.Next() {
			var hook, thread string
			var n int
			if err := rows.Scan(&hook, &thread, &n); err != nil {
				return nil, err
			}
			out = append(out, prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, float64(n), hook, thread))
		}
		return out, rows.Err()
	}
}
