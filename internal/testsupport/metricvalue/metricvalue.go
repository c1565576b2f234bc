// Package metricvalue reads one series out of a Prometheus registry, for
// tests that check what herald's metrics say.
package metricvalue

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// Of returns the value of the counter or gauge name whose labels are
// exactly labels (nil: a series without labels), or -1 when the registry
// holds no such series. A registry that fails to gather fails the test.
func Of(t testing.TB, g prometheus.Gatherer, name string, labels map[string]string) float64 {
	t.Helper()
	families, err := g.Gather()
	if err != nil {
		t.Fatalf("gathering %s: %v", name, err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			match := len(m.GetLabel()) == len(labels)
			for _, l := range m.GetLabel() {
				if v, ok := labels[l.GetName()]; !ok || v != l.GetValue() {
					match = false
				}
			}
			if !match {
				continue
			}
			if c := m.GetCounter(); c != nil {
				return c.GetValue()
			}
			return m.GetGauge().GetValue()
		}
	}
	return -1
}
