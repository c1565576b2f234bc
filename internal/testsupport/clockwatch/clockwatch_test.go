package clockwatch

import (
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
)

func TestAdvanceCountsTheWatchedTimersItFires(t *testing.T) {
	t.Parallel()
	fake := clockwork.NewFakeClock()
	c := Watch(fake)
	tm := c.NewTimer(time.Second)
	fired := make(chan struct{})
	c.AfterFunc(2*time.Second, func() { close(fired) })
	fake.NewTimer(500 * time.Millisecond) // not watched
	stopped := c.NewTimer(time.Second)
	stopped.Stop()
	if n := c.Pending(); n != 2 {
		t.Fatalf("%d pending, want 2 (the stopped timer and the unwatched one left out)", n)
	}

	c.Advance(999 * time.Millisecond)
	if n := c.Woken(); n != 0 {
		t.Fatalf("a step short of the first timer woke %d", n)
	}
	c.Advance(time.Millisecond)
	if n := c.Woken(); n != 1 {
		t.Fatalf("the step to the first timer woke %d, want 1", n)
	}
	<-tm.Chan()

	tm.Reset(5 * time.Second)
	c.Advance(time.Second)
	if n := c.Woken(); n != 1 {
		t.Fatalf("the step to the AfterFunc woke %d, want 1", n)
	}
	<-fired
	if n := c.Pending(); n != 1 {
		t.Fatalf("%d pending, want the reset timer", n)
	}
}
