package freeport

import (
	"net"
	"strconv"
	"syscall"
)

// Refusing is a loopback address that refuses every connection until
// release is called. Its port is bound and never listened on: a port
// merely closed again, like Addr's, may be taken meanwhile by any
// process that listens (go test runs packages side by side, each
// listening on ports of the kernel's choosing), and a test meant to meet
// a refusal then talks to someone else's server.
func Refusing() (addr string, release func(), err error) {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		return "", nil, err
	}
	release = func() { syscall.Close(fd) }
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		release()
		return "", nil, err
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		release()
		return "", nil, err
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(sa.(*syscall.SockaddrInet4).Port)), release, nil
}
