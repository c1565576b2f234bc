// Package freeport finds a loopback address for a child process to listen
// on: the benches, the demo and the tests start herald processes whose
// admin, proxy and interactions ports must not collide.
package freeport

import "net"

// Addr is a loopback address whose port was free a moment ago. Another
// process may take it before the caller's child listens; the child then
// fails to start, which its starter reports.
func Addr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}
