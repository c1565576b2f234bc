package adminhttp

import (
	"context"
	"sync"
	"time"
)

// CacheReady answers readiness checks from the last result for ttl, so
// probes and dashboards polling /readyz cost one check per ttl however
// many there are. Concurrent callers share one check.
func CacheReady(check ReadyFunc, ttl time.Duration) ReadyFunc {
	var (
		mu      sync.Mutex
		checked time.Time
		last    error
	)
	return func(ctx context.Context) error {
		mu.Lock()
		defer mu.Unlock()
		if time.Since(checked) < ttl {
			return last
		}
		last = check(ctx)
		checked = time.Now()
		return last
	}
}
