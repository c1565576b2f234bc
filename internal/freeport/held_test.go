package freeport

import (
	"net"
	"os"
	"testing"
)

// Held tells the process holding a port from one that does not: a start
// must not take another test's herald on a reused port for its own.
func TestHeldKnowsWhoHoldsThePort(t *testing.T) {
	if _, err := os.ReadFile("/proc/net/tcp"); err != nil {
		t.Skip("no /proc/net/tcp: Held trusts the port here")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if !Held(os.Getpid(), addr) {
		t.Errorf("this process listens on %s, Held says it does not", addr)
	}
	if Held(1, addr) {
		t.Errorf("process 1 does not listen on %s, Held says it does", addr)
	}
	ln.Close()
	if Held(os.Getpid(), addr) {
		t.Errorf("the listener on %s is closed, Held says this process still holds it", addr)
	}
}

// A listen that failed on a taken port is told from other failures.
func TestTakenReadsTheListenError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, err = net.Listen("tcp", ln.Addr().String())
	if err == nil || !Taken("herald cannot start: "+err.Error()) {
		t.Errorf("a second listen on %s: %v; Taken does not see the port taken", ln.Addr(), err)
	}
	if Taken("herald cannot start: DATABASE_URL is not set") {
		t.Error("Taken sees a taken port in an unrelated error")
	}
}
