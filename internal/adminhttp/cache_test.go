package adminhttp

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
)

// Many probes within the TTL cost one check; once it has passed (to the
// nanosecond, on a fake clock), the next probe checks again and sees the
// change. A failure is kept a tenth as long.
func TestCacheReady(t *testing.T) {
	t.Parallel()
	const ttl = 100 * time.Millisecond
	clock := clockwork.NewFakeClock()
	var calls atomic.Int32
	var fail atomic.Bool
	ready := CacheReady(func(context.Context) ([]string, error) {
		calls.Add(1)
		if fail.Load() {
			return nil, errors.New("database unreachable")
		}
		return nil, nil
	}, ttl, WithClock(clock))
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
	clock.Advance(ttl - 1)
	if _, err := ready(t.Context()); err != nil || calls.Load() != 1 {
		t.Errorf("a probe just within the TTL checked again: %d checks, %v", calls.Load(), err)
	}
	clock.Advance(1)
	if _, err := ready(t.Context()); err == nil {
		t.Error("a probe after the TTL did not check again")
	}
	calls.Store(0)
	fail.Store(false)
	if _, err := ready(t.Context()); err == nil {
		t.Error("a failure was not kept at all")
	}
	clock.Advance(ttl/10 - 1)
	if _, err := ready(t.Context()); err == nil {
		t.Error("a failure was not kept for a tenth of the TTL")
	}
	clock.Advance(1)
	if _, err := ready(t.Context()); err != nil {
		t.Errorf("a failure was kept past a tenth of the TTL: %v", err)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("%d checks after the failure, want 1", n)
	}
}
