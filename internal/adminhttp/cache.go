package adminhttp

import (
	"context"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"
)

// CacheOption configures CacheReady.
type CacheOption func(*cacheConfig)

type cacheConfig struct{ clock clockwork.Clock }

// WithClock measures the TTL on c instead of the real clock, so a test
// can step past it rather than sleep.
func WithClock(c clockwork.Clock) CacheOption {
	return func(cfg *cacheConfig) { cfg.clock = c }
}

// CacheReady answers readiness checks from the last result for ttl, so
// probes and dashboards polling /readyz cost one check per ttl however
// many there are. Concurrent callers share one check. A failed check is
// kept a tenth as long: a process coming up (or back) is seen ready
// soon after it is, not up to ttl later.
func CacheReady(check ReadyFunc, ttl time.Duration, opts ...CacheOption) ReadyFunc {
	cfg := cacheConfig{clock: clockwork.NewRealClock()}
	for _, o := range opts {
		o(&cfg)
	}
	clock := cfg.clock
	var (
		mu        sync.Mutex
		checked   time.Time
		lastNotes []string
		lastErr   error
	)
	return func(ctx context.Context) ([]string, error) {
		mu.Lock()
		defer mu.Unlock()
		keep := ttl
		if lastErr != nil {
			keep = ttl / 10
		}
		if !checked.IsZero() && clock.Since(checked) < keep {
			return lastNotes, lastErr
		}
		lastNotes, lastErr = check(ctx)
		checked = clock.Now()
		return lastNotes, lastErr
	}
}
