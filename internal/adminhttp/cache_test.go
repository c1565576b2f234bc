package adminhttp

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Many probes within the TTL cost one check; after it, the next probe
// checks again and sees the change. A failure is kept a tenth as long.
func TestCacheReady(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	var fail atomic.Bool
	ready := CacheReady(func(context.Context) ([]string, error) {
		calls.Add(1)
		if fail.Load() {
			return nil, errors.New("database unreachable")
		}
		return nil, nil
	}, 100*time.Millisecond)
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if _, err := ready(t.Context()); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := calls.Load(); n != 1 {
		t.Errorf("%d checks for 20 probes within the TTL, want 1", n)
	}
	fail.Store(true)
	// Paces the scenario: the TTL is wall-clock time (CacheReady reads
	// time.Now and takes no clock), so the test lets it pass.
	time.Sleep(150 * time.Millisecond)
	if _, err := ready(t.Context()); err == nil {
		t.Error("a probe after the TTL did not check again")
	}
	calls.Store(0)
	fail.Store(false)
	if _, err := ready(t.Context()); err == nil {
		t.Error("a failure was not kept at all")
	}
	time.Sleep(20 * time.Millisecond) // paces the scenario: lets a tenth of the TTL pass, as above
	if _, err := ready(t.Context()); err != nil {
		t.Errorf("a failure was kept past a tenth of the TTL: %v", err)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("%d checks after the failure, want 1", n)
	}
}
