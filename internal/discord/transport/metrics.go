package transport

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are labelled by route key (method + template): never an id or a
// token, so cardinality stays bounded and nothing secret is exported.
type metrics struct {
	requests    *prometheus.CounterVec
	rateLimited *prometheus.CounterVec
	retries     *prometheus.CounterVec
	outcomes    *prometheus.CounterVec
	queueWait   *prometheus.HistogramVec
}

func newMetrics(e *Engine, reg prometheus.Registerer) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "herald_discord_requests_total", Help: "Discord REST responses by route and HTTP status.",
		}, []string{"route", "status"}),
		rateLimited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "herald_discord_rate_limited_total", Help: "429 answers by route and scope (user, shared, global, edge).",
		}, []string{"route", "scope"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "herald_discord_retries_total", Help: "Requests queued again, by route and reason (429, 5xx, network).",
		}, []string{"route", "reason"}),
		outcomes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "herald_discord_refused_total", Help: "Requests the transport ended without a Discord answer, by route and reason.",
		}, []string{"route", "reason"}),
		queueWait: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "herald_discord_queue_wait_seconds", Help: "Time from queueing to sending, by route.",
			Buckets: []float64{.001, .005, .025, .1, .5, 1, 2.5, 5, 10, 30, 60, 300},
		}, []string{"route"}),
	}
	if reg == nil {
		return m
	}
	gauge := func(name, help string, f func(s Snapshot) float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, func() float64 { return f(e.Snapshot()) })
	}
	reg.MustRegister(m.requests, m.rateLimited, m.retries, m.outcomes, m.queueWait,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "herald_discord_degraded",
			Help: "1 while Discord fails many of this process's requests (5xx or no answer) and requests below interactive priority go one at a time."},
			func() float64 {
				if e.Health().Degraded {
					return 1
				}
				return 0
			}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "herald_discord_global_share",
			Help: "Requests a second of the bot's global limit this process may send: all of it, or its share beside the other processes on the token."},
			func() float64 { return float64(e.Health().GlobalShare) }),
		gauge("herald_discord_queued_requests", "Requests waiting in all bucket queues.", func(s Snapshot) float64 {
			n := 0
			for _, b := range s.Buckets {
				n += b.QueueLength
			}
			return float64(n)
		}),
		invalidGauge{e: e, desc: prometheus.NewDesc("herald_discord_invalid_requests",
			"Invalid requests (401, 403, non-shared 429) in the last 10 minutes, by budget (bot, interactions, webhooks).", []string{"budget"}, nil)},
		gauge("herald_discord_global_gate_closed", "1 while a global or edge 429 holds all requests.", func(s Snapshot) float64 {
			if s.GlobalGateUntil.After(s.Time) || s.EdgeBlockedUntil.After(s.Time) {
				return 1
			}
			return 0
		}),
		gauge("herald_discord_open_circuits", "Buckets whose circuit breaker is open.", func(s Snapshot) float64 {
			n := 0
			for _, b := range s.Buckets {
				if b.Breaker == string(breakerOpen) {
					n++
				}
			}
			return float64(n)
		}),
	)
	return m
}

func (m *metrics) outcome(r Route, reason string) { m.outcomes.WithLabelValues(r.Key(), reason).Inc() }

// invalidGauge exports each invalid-request budget's count.
type invalidGauge struct {
	e    *Engine
	desc *prometheus.Desc
}

func (g invalidGauge) Describe(ch chan<- *prometheus.Desc) { ch <- g.desc }

func (g invalidGauge) Collect(ch chan<- prometheus.Metric) {
	for _, b := range g.e.Snapshot().InvalidBudgets {
		ch <- prometheus.MustNewConstMetric(g.desc, prometheus.GaugeValue, float64(b.Count), b.Name)
	}
}

// Snapshot is the engine's state at one moment, for diagnostics
// (/debug/transport) and the admin status view.
type Snapshot struct {
	Time            time.Time `json:"time,omitzero"`
	GlobalLimit     int       `json:"global_limit"`
	GlobalInWindow  int       `json:"global_in_window"`
	GlobalGateUntil time.Time `json:"global_gate_until,omitzero"` // set by a global 429
	// GlobalWaiters are buckets ready to send but for a global slot.
	GlobalWaiters    int              `json:"global_waiters"`
	EdgeBlockedUntil time.Time        `json:"edge_blocked_until,omitzero"` // set when Discord's edge blocked the bot
	Unauthorized     bool             `json:"unauthorized"`
	InvalidRequests  int              `json:"invalid_requests"` // the bot's own budget
	InvalidLimit     int              `json:"invalid_limit"`
	InvalidBudgets   []InvalidBudget  `json:"invalid_budgets"`
	DeadWebhooks     int              `json:"dead_webhooks"`
	Buckets          []BucketSnapshot `json:"buckets"`
}

// BucketSnapshot describes one bucket. Name never contains a token.
type BucketSnapshot struct {
	Name                string           `json:"name"`
	Route               string           `json:"route"`
	QueueLength         int              `json:"queue_length"`
	InFlight            bool             `json:"in_flight"`
	Known               bool             `json:"known"`
	Limit               int              `json:"limit"`
	Remaining           int              `json:"remaining"`
	ResetAt             time.Time        `json:"reset_at,omitzero"`
	BlockedUntil        time.Time        `json:"blocked_until,omitzero"`
	Processed           int64            `json:"processed"`
	Retried             int64            `json:"retried"`
	RateLimited         map[string]int64 `json:"rate_limited"` // by scope
	TimedOut            int64            `json:"timed_out"`
	Cancelled           int64            `json:"cancelled"`
	ConsecutiveFailures int              `json:"consecutive_failures"`
	Breaker             string           `json:"breaker"`
}

// Snapshot returns the current state of every bucket and gate.
func (e *Engine) Snapshot() Snapshot {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.clock.Now()
	budgets := e.invalid.counts(now)
	s := Snapshot{
		Time: now, GlobalLimit: e.globalShare(now), GlobalInWindow: e.global.count(now),
		GlobalGateUntil: e.gateUntil, GlobalWaiters: len(e.globalWaiters), EdgeBlockedUntil: e.edgeUntil, Unauthorized: e.unauthorized,
		InvalidRequests: budgets[budgetBot].Count, InvalidLimit: budgets[budgetBot].Limit, InvalidBudgets: budgets,
		DeadWebhooks: len(e.deadWebhooks),
	}
	for _, b := range e.buckets {
		rl := make(map[string]int64, len(b.rateLimited))
		for k, v := range b.rateLimited {
			rl[k] = v
		}
		s.Buckets = append(s.Buckets, BucketSnapshot{
			Name: b.name, Route: b.route.Key(), QueueLength: b.queue.Len(), InFlight: b.inflight,
			Known: b.known, Limit: b.limit, Remaining: max(b.remaining, 0), ResetAt: b.resetAt, BlockedUntil: b.blockedUntil,
			Processed: b.processed, Retried: b.retried, RateLimited: rl, TimedOut: b.timedOut, Cancelled: b.cancelled,
			ConsecutiveFailures: b.failures, Breaker: string(b.breaker),
		})
	}
	return s
}
