package adminhttp

import (
	"context"
	"sync"
	"time"
)

// CacheReady answers readiness checks from the last result for ttl, so
// probes and dashboards polling /readyz cost one check per ttl however
// many there are. Concurrent callers share one check. A failed check is
// kept a tenth as long: a process coming up (or back) is seen ready
// soon after it is, not up to ttl later.
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
		keep := ttl
		if lastErr != nil {
			keep = ttl / 10
		}
		if time.Since(checked) < keep {
			return lastNotes, lastErr
		}
		lastNotes, lastErr = check(ctx)
		checked = time.Now()
		return lastNotes, lastErr
	}
}
