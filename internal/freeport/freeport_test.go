package freeport

import (
	"net"
	"testing"
)

// The address is on loopback and can be listened on once Addr returns.
func TestAddrCanBeListenedOn(t *testing.T) {
	addr, err := Addr()
	if err != nil {
		t.Fatal(err)
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil || host != "127.0.0.1" || port == "0" {
		t.Fatalf("addr = %q, %v", addr, err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen on %s: %v", addr, err)
	}
	ln.Close()
}
