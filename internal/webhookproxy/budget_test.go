package webhookproxy

import (
	"errors"
	"testing"
	"time"
)

// Each caller has its share of invalid requests and all callers a total;
// a share comes back as its oldest unit leaves the 10-minute window.
func TestBudgetPerCallerAndTotal(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	b := newBudget(2, 3, func() time.Time { return now })
	spend := func(caller string) error {
		if err := b.allow(caller); err != nil {
			return err
		}
		b.spend(caller)
		return nil
	}
	for _, caller := range []string{"a", "a"} {
		if err := spend(caller); err != nil {
			t.Fatal(err)
		}
		now = now.Add(time.Minute)
	}
	var over *overBudget
	if err := spend("a"); !errors.As(err, &over) || over.retryAfter != 8*time.Minute {
		t.Errorf("a's third: %v, want over budget until its first unit leaves (8m)", err)
	}
	if err := spend("b"); err != nil {
		t.Errorf("b's first: %v", err)
	}
	if err := spend("c"); !errors.As(err, &over) {
		t.Errorf("c past the total: %v", err)
	}
	if b.used() != 3 {
		t.Errorf("used %d, want 3", b.used())
	}
	now = now.Add(8 * time.Minute)
	if err := spend("a"); err != nil {
		t.Errorf("a after the window moved: %v", err)
	}
}
