package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// Scrapes within the ttl share one read; a failed read fails the scrape
// and is not kept.
func TestGaugesReadOncePerTTL(t *testing.T) {
	desc := prometheus.NewDesc("test_depth", "test", []string{"lane"}, nil)
	reads := 0
	g := Gauges(desc, time.Hour, func(context.Context) ([]prometheus.Metric, error) {
		reads++
		return []prometheus.Metric{prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, 3, "sync")}, nil
	})
	for range 3 {
		if n := testutil.CollectAndCount(g); n != 1 {
			t.Fatalf("%d metrics, want 1", n)
		}
	}
	if reads != 1 {
		t.Errorf("%d reads for 3 scrapes within the ttl, want 1", reads)
	}
	failing := Gauges(desc, time.Hour, func(ctx context.Context) ([]prometheus.Metric, error) {
		reads++
		return nil, errors.New("db down")
	})
	reg := prometheus.NewRegistry()
	reg.MustRegister(failing)
	before := reads
	for range 2 {
		if _, err := reg.Gather(); err == nil {
			t.Error("a failed read must fail the scrape")
		}
	}
	if reads != before+2 {
		t.Errorf("%d reads for 2 failed scrapes: a failed read must not be kept", reads-before)
	}
}
