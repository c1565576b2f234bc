package heraldtest

import (
	"net"
	"os"
	"testing"
)

// listens tells the process holding a port from one that does not: a
// start must not take another test's herald on a reused port for its own.
func TestListensKnowsWhoHoldsThePort(t *testing.T) {
	if _, err := os.ReadFile("/proc/net/tcp"); err != nil {
		t.Skip("no /proc/net/tcp: listens trusts the port here")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if !listens(os.Getpid(), addr) {
		t.Errorf("this process listens on %s, listens says it does not", addr)
	}
	if listens(1, addr) {
		t.Errorf("process 1 does not listen on %s, listens says it does", addr)
	}
	ln.Close()
	if listens(os.Getpid(), addr) {
		t.Errorf("the listener on %s is closed, listens says this process still holds it", addr)
	}
}
