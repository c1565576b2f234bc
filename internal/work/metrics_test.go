package work_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/riverqueue/river"

	"github.com/herald-bot/herald/internal/store/storetest"
	"github.com/herald-bot/herald/internal/testsupport/metricvalue"
	"github.com/herald-bot/herald/internal/testsupport/wait"
	"github.com/herald-bot/herald/internal/work"
)

// Outcomes, rate-limit waits and lane depth reach Prometheus, labelled by
// job kind, outcome and lane only.
func TestJobMetrics(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t)
	w := &callWorker{calls: make(chan string, 16)}
	reg := work.NewRegistry()
	work.Register(reg, w)
	metrics := prometheus.NewRegistry()
	c, err := work.NewClient(pool, work.Options{Registry: reg, Lanes: work.LaneWorkers{Interactive: 1, Events: 1, Sync: 1, Background: 1},
		ShutdownTimeout: time.Second, Logger: slog.New(slog.DiscardHandler), Registerer: metrics})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	for _, fail := range []string{"permission", "rate_limited"} {
		if _, err := c.Insert(ctx, callArgs{Fail: fail}, &river.InsertOpts{Queue: string(work.Events)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Insert(ctx, callArgs{Fail: "permission"}, &river.InsertOpts{Queue: string(work.Background), ScheduledAt: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer work.Stop(c, time.Second, time.Second)
	wait.Until(t, "outcomes counted", func() bool {
		return metricvalue.Of(t, metrics, "herald_job_outcomes_total", map[string]string{"kind": "test_call", "outcome": "needs_permission"}) == 1 &&
			metricvalue.Of(t, metrics, "herald_job_outcomes_total", map[string]string{"kind": "test_call", "outcome": "rate_limited"}) >= 1
	})
	if n := metricvalue.Of(t, metrics, "herald_lane_queue_depth", map[string]string{"lane": "background", "state": "scheduled"}); n != 1 {
		t.Errorf("background lane depth = %v, want the 1 scheduled job", n)
	}
	// Scrapes within depthTTL reuse the count instead of querying again.
	if _, err := c.Insert(ctx, callArgs{Fail: "permission"}, &river.InsertOpts{Queue: string(work.Background), ScheduledAt: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if n := metricvalue.Of(t, metrics, "herald_lane_queue_depth", map[string]string{"lane": "background", "state": "scheduled"}); n != 1 {
		t.Errorf("background lane depth = %v right after the last scrape, want the cached 1", n)
	}
	if n, _ := testutil.GatherAndCount(metrics, "herald_job_wait_seconds"); n != 1 {
		t.Errorf("wait histograms = %d, want one for test_call", n)
	}
}

// Jobs in a lane's shard queues count in the lane's depth: the label is
// the lane, never a queue named after a shard.
func TestLaneDepthCountsShardQueuesAsTheirLane(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t)
	reg := work.NewRegistry()
	work.Register(reg, &callWorker{calls: make(chan string, 1)})
	lanes := work.LaneWorkers{Interactive: 1, Events: 1, Sync: 1, Background: 1}
	p := work.NewPartitions(pool, lanes, slog.New(slog.DiscardHandler))
	metrics := prometheus.NewRegistry()
	c, err := work.NewClient(pool, work.Options{Registry: reg, Lanes: lanes, Logger: slog.New(slog.DiscardHandler), Registerer: metrics, Partitions: p})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.SetShards(t.Context(), 2); err != nil {
		t.Fatal(err)
	}
	later := &river.InsertOpts{Queue: string(work.Background), ScheduledAt: time.Now().Add(time.Hour)}
	for _, opts := range []*river.InsertOpts{later, work.ForGuild(later, guildOn(0, 2, 1)), work.ForGuild(later, guildOn(1, 2, 2))} {
		if _, err := c.Insert(t.Context(), callArgs{}, opts); err != nil {
			t.Fatal(err)
		}
	}
	if n := metricvalue.Of(t, metrics, "herald_lane_queue_depth", map[string]string{"lane": "background", "state": "scheduled"}); n != 3 {
		t.Errorf("background lane depth = %v, want its 3 scheduled jobs, 2 of them in shard queues", n)
	}
	if n, _ := testutil.GatherAndCount(metrics, "herald_lane_queue_depth"); n != 1 {
		t.Errorf("lane depth series = %d, want the background lane's one", n)
	}
}
