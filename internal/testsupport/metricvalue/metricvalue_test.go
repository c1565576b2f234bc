package metricvalue_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/herald-bot/herald/internal/testsupport/metricvalue"
)

func TestOf(t *testing.T) {
	reg := prometheus.NewRegistry()
	refused := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "refused_total", Help: "h"}, []string{"reason"})
	waiting := prometheus.NewGauge(prometheus.GaugeOpts{Name: "waiting", Help: "h"})
	reg.MustRegister(refused, waiting)
	refused.WithLabelValues("busy").Add(3)
	refused.WithLabelValues("bad_signature").Inc()
	waiting.Set(7)
	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"refused_total", map[string]string{"reason": "busy"}, 3},
		{"refused_total", map[string]string{"reason": "bad_signature"}, 1},
		{"refused_total", map[string]string{"reason": "other"}, -1},
		{"refused_total", nil, -1},                                           // the series has a label
		{"refused_total", map[string]string{"reason": "busy", "x": "y"}, -1}, // and only one
		{"refused_total", map[string]string{"cause": "busy"}, -1},
		{"waiting", nil, 7},
		{"waiting", map[string]string{"reason": "busy"}, -1},
		{"missing", nil, -1},
	} {
		if got := metricvalue.Of(t, reg, tc.name, tc.labels); got != tc.want {
			t.Errorf("Of(%s, %v) = %v, want %v", tc.name, tc.labels, got, tc.want)
		}
	}
}
