package freeport

import (
	"errors"
	"net"
	"syscall"
	"testing"
)

// Connecting is refused, and nothing else can listen on the port, until
// release.
func TestRefusingRefusesAndKeepsItsPort(t *testing.T) {
	addr, release, err := Refusing()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := net.Dial("tcp", addr); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("dial %s: %v, want connection refused", addr, err)
	}
	if ln, err := net.Listen("tcp", addr); err == nil {
		ln.Close()
		t.Errorf("another socket listened on %s while it was held", addr)
	}
	release()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen on %s after release: %v", addr, err)
	}
	ln.Close()
}
