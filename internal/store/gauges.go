package store

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Gauges is a collector of gauges read from a table, such as queue depths:
// read runs at most once per ttl (with a 2 s deadline), so scraping often
// costs one query per ttl; a failed read reports the error to the scrape.
func Gauges(desc *prometheus.Desc, ttl time.Duration, read func(ctx context.Context) ([]prometheus.Metric, error)) prometheus.Collector {
	return &gauges{desc: desc, ttl: ttl, read: read}
}

type gauges struct {
	desc *prometheus.Desc
	ttl  time.Duration
	read func(ctx context.Context) ([]prometheus.Metric, error)

	mu   sync.Mutex
	at   time.Time
	last []prometheus.Metric
}

func (g *gauges) Describe(ch chan<- *prometheus.Desc) { ch <- g.desc }

func (g *gauges) Collect(ch chan<- prometheus.Metric) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if time.Since(g.at) >= g.ttl {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		ms, err := g.read(ctx)
		cancel()
		if err != nil {
			ch <- prometheus.NewInvalidMetric(g.desc, err)
			return
		}
		g.last, g.at = ms, time.Now()
	}
	for _, m := range g.last {
		ch <- m
	}
}
