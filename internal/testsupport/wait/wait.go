// Package wait polls for a condition in tests: the one way herald's tests
// wait for something asynchronous (a job, a simulator's state, a gateway
// session) to happen.
package wait

import (
	"testing"
	"time"
)

// Timeout is how long Until polls before failing the test: generous, as
// CI machines run many test binaries at once on 2 cores.
const Timeout = 20 * time.Second

// every is the polling interval.
const every = 10 * time.Millisecond

// Until polls cond until it reports true, failing t with what it waited
// for when Timeout passes first.
func Until(t testing.TB, what string, cond func() bool) {
	t.Helper()
	Within(t, Timeout, what, cond)
}

// Within is Until with a timeout of its own, for waits that take longer
// by design, such as a job store electing a new leader.
func Within(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	WithinShowing(t, timeout, what, cond, nil)
}

// WithinShowing is Within whose failure also says what show reports:
// the state cond last looked at, so a timeout explains itself. A nil
// show adds nothing.
func WithinShowing(t testing.TB, timeout time.Duration, what string, cond func() bool, show func() string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			if show != nil {
				t.Fatalf("timed out after %s waiting for %s: %s", timeout, what, show())
			}
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(every)
	}
}
