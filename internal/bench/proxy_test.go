package bench

import (
	"testing"
	"time"

	"github.com/herald-bot/herald/internal/store/storetest"
)

// A short run of every phase: callers get 204s that are all stored, the
// queue reaches its depth, and 60 notifications from 4 senders to one
// webhook arrive each exactly once, in each sender's order, no faster than
// the simulator's limit allows.
func TestProxyRun(t *testing.T) {
	t.Parallel()
	res, err := RunProxy(t.Context(), storetest.URL(t), ProxyAcceptFor(time.Second), ProxyWarmup(500*time.Millisecond), ProxyClients(8), ProxyWebhooks(8),
		ProxyQueued(2000), ProxyNotifications(60, 4), ProxyTimeScale(0.02))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", res)
	if res.Accepted == 0 || res.AcceptedPerS <= 0 || res.AcceptP99MS <= 0 || res.AcceptP99MS < res.AcceptP50MS {
		t.Errorf("accepted %d (%.0f/s), p50 %.2f ms, p99 %.2f ms", res.Accepted, res.AcceptedPerS, res.AcceptP50MS, res.AcceptP99MS)
	}
	if res.BareBatchPerS <= 0 || res.AcceptedToBare <= 0 {
		t.Errorf("bare River's batch insert %.0f/s, herald ÷ bare %.3f: want the baseline measured", res.BareBatchPerS, res.AcceptedToBare)
	}
	if len(res.Refused) > 0 {
		t.Errorf("refused %v in the acceptance phase: every token was verified first and no bound was reached", res.Refused)
	}
	if res.Queued < 2000 || res.RSSMB100kQueued <= 0 {
		t.Errorf("queued %d, RSS %.1f MB; want at least 2000 queued and an RSS", res.Queued, res.RSSMB100kQueued)
	}
	if res.Notifications != 60 || res.Delivered != 60 || res.Lost != 0 || res.Duplicates != 0 || res.OutOfOrder != 0 {
		t.Errorf("%d notifications: %d delivered, %d lost, %d duplicated, %d out of order; want all 60 once, in order",
			res.Notifications, res.Delivered, res.Lost, res.Duplicates, res.OutOfOrder)
	}
	// 30 a minute per channel at 0.02: 25 a second.
	if res.LimitPerS != 25 {
		t.Errorf("limit %.2f/s, want 25", res.LimitPerS)
	}
	// The simulator enforces the limit, so the ratio above 1 would mean
	// the minimum is wrong.
	if res.DeliveryRatioToLimit <= 0 || res.DeliveryRatioToLimit > 1 || res.DeliveredPerS <= 0 {
		t.Errorf("delivery ratio to limit %.3f (%.2f/s delivered, least time %.2fs, took %.2fs): want in (0, 1]",
			res.DeliveryRatioToLimit, res.DeliveredPerS, res.MinimumSeconds, res.DeliverySeconds)
	}
}
