package tcpproxy_test

import (
	"net"
	"testing"

	"github.com/herald-bot/herald/internal/testsupport/tcpproxy"
)

// TestHoldStallsWithoutClosing holds an open connection and one accepted
// while held: writes succeed, reads block until the client's own deadline,
// and after Release every held line arrives, in order, on the same sockets.
func TestHoldStallsWithoutClosing(t *testing.T) {
	t.Parallel()
	p := tcpproxy.Start(t, echoServer(t))
	open := dial(t, p.Addr())
	write(t, open, "before\n")
	expectRead(t, open, "BEFORE\n")

	p.Hold()
	late := dial(t, p.Addr())
	for _, c := range []net.Conn{open, late} {
		write(t, c, "one\n")
		write(t, c, "two\n")
		expectSilence(t, c)
	}

	p.Release()
	for _, c := range []net.Conn{open, late} {
		expectRead(t, c, "ONE\nTWO\n")
	}
}

// TestHoldStopsBothDirections holds bytes from either side, which an echo
// server alone could not tell apart: this test plays the server itself.
func TestHoldStopsBothDirections(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	p := tcpproxy.Start(t, ln.Addr().String())
	client, server := dial(t, p.Addr()), accept(t, ln)

	p.Hold()
	write(t, client, "up\n")
	write(t, server, "down\n")
	expectSilence(t, server)
	expectSilence(t, client)

	p.Release()
	expectRead(t, server, "up\n")
	expectRead(t, client, "down\n")
}

// TestCutWhileHeld ends held connections at once, and the proxy, still held
// when the test ends, closes without waiting for a Release.
func TestCutWhileHeld(t *testing.T) {
	t.Parallel()
	p := tcpproxy.Start(t, echoServer(t))
	c := dial(t, p.Addr())
	p.Hold()
	write(t, c, "lost\n")

	p.Cut()
	expectClosed(t, c)

	p.Restore()
	write(t, dial(t, p.Addr()), "held until the proxy closes\n")
}
