package wsgateway

import (
	"context"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
)

const testInterval = 40 * time.Second

// fakeGateway serves a gateway on a fake clock and connects one client.
func fakeGateway(t *testing.T) (*Gateway, *clockwork.FakeClock, *client) {
	t.Helper()
	clock := clockwork.NewFakeClock()
	g := New(Config{Clock: clock, HeartbeatInterval: testInterval, Ready: testReady()})
	c := connect(t, serve(t, g))
	return g, clock, c
}

// waitTimer waits until the connection's heartbeat timer is armed.
func waitTimer(t *testing.T, clock *clockwork.FakeClock) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), readTimeout)
	defer cancel()
	if err := clock.BlockUntilContext(ctx, 1); err != nil {
		t.Fatalf("heartbeat timer never armed: %v", err)
	}
}

func TestMissedHeartbeatIsRequestedThenTimesOut(t *testing.T) {
	t.Parallel()
	g, clock, c := fakeGateway(t)
	id := c.identify()

	waitTimer(t, clock)
	clock.Advance(testInterval)
	if p := c.read(); p.Op != opHeartbeat || string(p.D) != "null" {
		t.Fatalf("got %v, want a heartbeat request (op 1)", p)
	}
	waitTimer(t, clock)
	clock.Advance(testInterval / 4)
	c.expectClose(CloseSessionTimedOut)

	// The session survives the timeout: the client is "forced to Resume".
	c = connect(t, c.base)
	c.resume(id, 1)
	c.readDispatch("RESUMED", 2)
	if n := g.Sessions(); n != 1 {
		t.Errorf("Sessions() = %d, want 1", n)
	}
}

func TestHeartbeatsKeepTheConnection(t *testing.T) {
	t.Parallel()
	_, clock, c := fakeGateway(t)
	c.identify()

	for range 3 {
		waitTimer(t, clock)
		clock.Advance(testInterval - time.Millisecond)
		c.op(opHeartbeat, 1)
		// Had the deadline passed, the heartbeat request would come first.
		if p := c.read(); p.Op != opHeartbeatAck {
			t.Fatalf("got %v, want HEARTBEAT_ACK", p)
		}
	}
}

func TestAnsweredHeartbeatRequestKeepsTheConnection(t *testing.T) {
	t.Parallel()
	_, clock, c := fakeGateway(t)

	waitTimer(t, clock)
	clock.Advance(testInterval)
	if p := c.read(); p.Op != opHeartbeat {
		t.Fatalf("got %v, want a heartbeat request", p)
	}
	c.op(opHeartbeat, nil)
	if p := c.read(); p.Op != opHeartbeatAck {
		t.Fatalf("got %v, want HEARTBEAT_ACK", p)
	}
	// The answer restarted a full interval: the grace period alone closes nothing.
	waitTimer(t, clock)
	clock.Advance(testInterval / 4)
	c.op(opHeartbeat, nil)
	if p := c.read(); p.Op != opHeartbeatAck {
		t.Fatalf("got %v, want HEARTBEAT_ACK", p)
	}
}

func TestCommandRateLimit(t *testing.T) {
	t.Parallel()
	_, clock, c := fakeGateway(t)
	beat := func(n int) {
		t.Helper()
		for range n {
			c.op(opHeartbeat, nil)
			if p := c.read(); p.Op != opHeartbeatAck {
				t.Fatalf("got %v, want HEARTBEAT_ACK", p)
			}
		}
	}
	beat(60)
	clock.Advance(30 * time.Second)
	beat(60)
	// The first 60 leave the window exactly 60 s after they were sent.
	clock.Advance(30 * time.Second)
	beat(60)
	c.op(opHeartbeat, nil)
	c.expectClose(CloseRateLimited)
}

func TestCommandLimiter(t *testing.T) {
	t.Parallel()
	var l commandLimiter
	start := time.Unix(0, 0)
	for i := range commandLimit {
		if !l.allow(start.Add(time.Duration(i) * time.Millisecond)) {
			t.Fatalf("command %d refused", i+1)
		}
	}
	if l.allow(start.Add(commandWindow - time.Nanosecond)) {
		t.Fatal("command 121 within 60 s allowed")
	}
	if !l.allow(start.Add(commandWindow)) {
		t.Fatal("command 121 at 60 s after the first refused")
	}
	if l.allow(start.Add(commandWindow)) {
		t.Fatal("second command at 60 s allowed; only the first has left the window")
	}
}
