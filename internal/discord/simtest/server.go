package simtest

import (
	"context"
	"net"
	"net/http"
	"sync"
	"time"
)

// server serves the simulator on a loopback port and closes as
// httptest.Server does — connections without a request in flight at
// once, then waiting for the handlers still running — but leaves
// http.DefaultTransport alone: httptest.Server.Close closes its idle
// connections, and a request of a parallel test that had just taken one
// then fails with "CloseIdleConnections called".
type server struct {
	http  *http.Server
	mu    sync.Mutex
	conns map[net.Conn]http.ConnState
}

func serve(h http.Handler) (*server, string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	s := &server{conns: map[net.Conn]http.ConnState{}}
	s.http = &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ConnState: s.track}
	go s.http.Serve(ln)
	return s, "http://" + ln.Addr().String(), nil
}

func (s *server) track(c net.Conn, st http.ConnState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch st {
	case http.StateClosed, http.StateHijacked:
		delete(s.conns, c)
	default:
		s.conns[c] = st
	}
}

// close stops the server and reports whether every handler finished
// within wait; those that did not are cut off. Connections that carry no
// request are closed first: Shutdown would count a new one as busy for
// its first 5 s.
func (s *server) close(wait time.Duration) bool {
	s.mu.Lock()
	for c, st := range s.conns {
		if st == http.StateNew || st == http.StateIdle {
			c.Close()
		}
	}
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if s.http.Shutdown(ctx) != nil {
		s.http.Close()
		return false
	}
	return true
}
