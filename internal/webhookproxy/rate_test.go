package webhookproxy

import (
	"testing"
	"time"
)

// A caller's posts and body bytes beyond its rate get Discord's 429 with
// the wait; another caller keeps its own, and time refills both.
func TestCallerRates(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	r := newRates(2, 100, 300) // 2 posts/s (bursts of 20), 100 B/s (bursts of 300 B)
	for i := range 20 {
		if e := r.admit("a", now); e != nil {
			t.Fatalf("post %d within the burst: %+v", i, e)
		}
	}
	e := r.admit("a", now)
	if e == nil || e.Status != 429 || e.RetryAfter < 0.4 || e.RetryAfter > 0.6 {
		t.Errorf("post past the burst: %+v, want 429 with about 0.5 s to wait", e)
	}
	if e := r.admit("b", now); e != nil {
		t.Errorf("another caller: %+v", e)
	}
	if e := r.admit("a", now.Add(time.Second)); e != nil {
		t.Errorf("a second later: %+v", e)
	}
	if e := r.admitBytes("a", 300, now); e != nil {
		t.Errorf("one maximum body: %+v", e)
	}
	if e := r.admitBytes("a", 50, now); e == nil || e.Code != codeRateLimited {
		t.Errorf("bytes past the burst: %+v", e)
	}
	if e := r.admitBytes("a", 50, now.Add(time.Second)); e != nil {
		t.Errorf("bytes a second later: %+v", e)
	}
}
