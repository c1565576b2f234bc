package interaction

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the boundary metrics of seed 001: ack latency, events per
// interaction, dedupe hits, timeouts and failures of the first
// interaction after an idle spell (cold start).
type metrics struct {
	ackLatency             *prometheus.HistogramVec
	dedupeHits             prometheus.Counter
	eventsPerInteraction   prometheus.Histogram
	timeouts               prometheus.Counter
	firstAfterIdleFailures prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) metrics {
	m := metrics{
		ackLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "herald_ack_latency_seconds",
			Help:    "From an interaction received (gateway or Interactions Endpoint URL) to the initial response answered, by outcome (routed, outdated, failed, replay, unanswered).",
			Buckets: []float64{.005, .01, .02, .05, .1, .25, .5, 1, 2, 3},
		}, []string{"outcome"}),
		dedupeHits: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "herald_interaction_dedupe_hits_total",
			Help: "Interactions delivered again whose work was already enqueued.",
		}),
		eventsPerInteraction: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "herald_events_per_interaction",
			Help:    "Jobs one interaction enqueued.",
			Buckets: []float64{0, 1, 2, 3, 5, 10},
		}),
		timeouts: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "herald_interaction_timeouts_total",
			Help: "Interactions not answered within Discord's 3 seconds.",
		}),
		firstAfterIdleFailures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "herald_interaction_first_after_idle_failures_total",
			Help: "Unanswered interactions that were the first after an idle spell (cold start).",
		}),
	}
	if reg != nil {
		reg.MustRegister(m.ackLatency, m.dedupeHits, m.eventsPerInteraction, m.timeouts, m.firstAfterIdleFailures)
	}
	return m
}

// idleSpell is how long without interactions makes the next one a "first
// after idle" (seed 001's cold-start failures).
const idleSpell = 5 * time.Minute

// idleTracker remembers when the last interaction arrived.
type idleTracker struct {
	mu   sync.Mutex
	last time.Time
}

// firstAfter reports whether the interaction received at t came after an
// idle spell, and records it.
func (it *idleTracker) firstAfter(t time.Time) bool {
	it.mu.Lock()
	defer it.mu.Unlock()
	first := it.last.IsZero() || t.Sub(it.last) > idleSpell
	it.last = t
	return first
}
