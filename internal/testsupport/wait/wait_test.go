package wait

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestUntilReturnsOnceTheConditionHolds(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	go func() {
		time.Sleep(30 * time.Millisecond)
		n.Store(1)
	}()
	Until(t, "the flag", func() bool { return n.Load() == 1 })
}

// fakeT records the failure Until reports instead of ending the test.
type fakeT struct {
	testing.TB
	failed string
}

func (f *fakeT) Helper() {}
func (f *fakeT) Fatalf(format string, args ...any) {
	f.failed = fmt.Sprintf(format, args...)
	panic(f)
}

func TestUntilFailsWithWhatItWaitedFor(t *testing.T) {
	t.Parallel()
	f := &fakeT{TB: t}
	defer func() {
		if recover() != f || !strings.Contains(f.failed, "waiting for never") {
			t.Errorf("Until did not fail naming what it waited for: %q", f.failed)
		}
	}()
	Within(f, 50*time.Millisecond, "never", func() bool { return false })
}
