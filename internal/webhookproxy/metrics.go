package webhookproxy

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/herald-bot/herald/internal/store"
)

// metrics are labelled only from fixed sets — outcomes, and the callers'
// names from HERALD_PROXY_KEYS — never from a request's path or body.
type metrics struct {
	accepted     prometheus.Counter
	refused      *prometheus.CounterVec
	delivered    prometheus.Counter
	retried      *prometheus.CounterVec
	deadLettered *prometheus.CounterVec
	reconciled   *prometheus.CounterVec
	latency      prometheus.Histogram
	batch        prometheus.Histogram
	reg          prometheus.Registerer
}

func newMetrics(reg prometheus.Registerer, db *pgxpool.Pool, keys serviceKeys, invalid *budget) *metrics {
	m := &metrics{
		accepted: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "herald_webhookproxy_accepted_total", Help: "Webhook requests stored for delivery.",
		}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "herald_webhookproxy_refused_total", Help: "Webhook requests refused, by reason (invalid, no_route, bad_token, forbidden, too_large, over_budget, rate_limited, queue_full, dead, unavailable).",
		}, []string{"reason"}),
		delivered: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "herald_webhookproxy_delivered_total", Help: "Deliveries Discord confirmed.",
		}),
		retried: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "herald_webhookproxy_retried_total", Help: "Delivery attempts that will be retried, by reason (rate_limited, transient, unknown_outcome, unauthorized).",
		}, []string{"reason"}),
		deadLettered: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "herald_webhookproxy_dead_lettered_total", Help: "Deliveries given up, by class (invalid, invalid_token, over_budget, not_found, permission, dead, retries_exhausted).",
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
	m.reg = reg
	if reg != nil {
		rows := prometheus.NewDesc("herald_webhookproxy_queued", "Pending deliveries per caller (key: a HERALD_PROXY_KEYS service, keyless, or other).", []string{"key"}, nil)
		bytes := prometheus.NewDesc("herald_webhookproxy_queued_bytes", "Bytes of pending deliveries' bodies per caller.", []string{"key"}, nil)
		reg.MustRegister(m.accepted, m.refused, m.delivered, m.retried, m.deadLettered, m.reconciled, m.latency, m.batch,
			store.Gauges(rows, depthTTL, usageOf(db, rows, keys, false)), store.Gauges(bytes, depthTTL, usageOf(db, bytes, keys, true)),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "herald_webhookproxy_invalid_requests",
				Help: "Bad webhook tokens the proxy sent on to Discord in the last 10 minutes (its own budget, HERALD_PROXY_INVALID_TOTAL)."},
				func() float64 { return float64(invalid.used()) }))
	}
	return m
}

// watchBodies exports the bytes of request bodies the ingress holds.
func (m *metrics) watchBodies(p *bytePool) {
	if m.reg != nil {
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "herald_webhookproxy_body_bytes",
			Help: "Bytes of request bodies held in memory (bound: HERALD_PROXY_MEMORY)."}, func() float64 { return float64(p.used()) }))
	}
}

// depthTTL is how long one read of the usage serves scrapes.
const depthTTL = 5 * time.Second

// usageOf reads the pending rows or bytes per caller from the database,
// so it counts every herald's deliveries. Callers outside the configured
// keys (a key since removed) are summed as "other".
func usageOf(db *pgxpool.Pool, desc *prometheus.Desc, keys serviceKeys, bytes bool) func(context.Context) ([]prometheus.Metric, error) {
	named := map[string]bool{}
	for _, s := range keys {
		named[s] = true
	}
	return func(ctx context.Context) ([]prometheus.Metric, error) {
		rows, err := db.Query(ctx, `SELECT substr(scope, 5), sum(rows)::bigint, sum(bytes)::bigint FROM webhookproxy_usage WHERE scope >= 'key:' AND scope < 'key;' GROUP BY scope`)
		if err != nil {
			return nil, err
		}
		sums := map[string]int64{}
		var service string
		var n, b int64
		if _, err := pgx.ForEachRow(rows, []any{&service, &n, &b}, func() error {
			label := "other"
			switch {
			case service == "":
				label = "keyless"
			case named[service]:
				label = service
			}
			if bytes {
				n = b
			}
			sums[label] += n
			return nil
		}); err != nil {
			return nil, err
		}
		out := make([]prometheus.Metric, 0, len(sums))
		for label, v := range sums {
			out = append(out, prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, float64(v), label))
		}
		return out, nil
	}
}
