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
		mu        sync.Mutex
		checked   time.Time
		lastNotes []string
		lastErr   error
	)
	return func(ctx context.Context) ([]string, error) {
		mu.Lock()
		defer mu.Unlock()
		if time.Since(checked) < ttl {
			return lastNotes, lastErr
		}
		lastNotes, lastErr = check(ctx)
		checked = time.Now()
		return lastNotes, lastErr
	}
}
