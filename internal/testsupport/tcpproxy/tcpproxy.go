// Package tcpproxy forwards TCP connections to a target and injects network
// faults on demand: it cuts connections, holds them as a partition would, or
// cuts one right after a request, so a test can make a server unreachable or
// a response lost without stopping the server.
package tcpproxy

import (
	"errors"
	"net"
	"sync"
	"testing"
	"time"
)

// Proxy forwards every connection accepted on Addr to its target.
type Proxy struct {
	target string
	ln     net.Listener
	wg     sync.WaitGroup

	mu      sync.Mutex
	cut     bool
	held    chan struct{} // non-nil while held; Release closes it
	trigger []byte        // the pattern CutAfter armed; nil once it fired
	// triggerConn selects the connections trigger applies to (see CutAfterIn).
	triggerConn []byte
	links       map[*link]struct{}
}

// link is one proxied connection.
type link struct {
	client, server net.Conn      // server is nil until dialled
	dead           chan struct{} // closed once the link may forward nothing more
	first          []byte        // the client's first chunk, naming the connection (CutAfterIn)
}

// Start listens on 127.0.0.1:0 and forwards every connection to target until
// t's cleanup closes the proxy.
func Start(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("tcpproxy: listen: %v", err)
	}
	p := &Proxy{target: target, ln: ln, links: make(map[*link]struct{})}
	p.wg.Go(p.accept)
	t.Cleanup(p.close)
	return p
}

// Addr returns the host:port clients connect to.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Cut closes every open connection and, until Restore, closes new ones as
// soon as they are accepted, as a server that went away would.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	for l := range p.links {
		l.kill()
	}
}

// Restore forwards new connections again.
func (p *Proxy) Restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = false
}

func (p *Proxy) close() {
	p.ln.Close()
	p.Cut()
	p.wg.Wait()
}

func (p *Proxy) accept() {
	for {
		client, err := p.ln.Accept()
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil {
			// Temporary failures such as running out of file descriptors
			// pass; a short pause keeps the loop from spinning meanwhile.
			time.Sleep(10 * time.Millisecond)
			continue
		}
		p.wg.Go(func() { p.forward(client) })
	}
}

func (p *Proxy) forward(client net.Conn) {
	l := &link{client: client, dead: make(chan struct{})}
	if !p.track(l) {
		client.Close()
		return
	}
	defer p.untrack(l)
	// A partition would not carry the handshake either: the server hears of
	// a connection accepted while held only once it is released.
	if !p.admit(l) {
		return
	}
	server, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		return
	}
	if !p.attach(l, server) {
		server.Close()
		return
	}

	var wg sync.WaitGroup
	wg.Go(func() { p.pipe(l, server, client, true) })
	wg.Go(func() { p.pipe(l, client, server, false) })
	wg.Wait()
}

// track registers l so Cut can close it; it refuses while the proxy is cut.
func (p *Proxy) track(l *link) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut {
		return false
	}
	p.links[l] = struct{}{}
	return true
}

// attach gives l its server connection unless l was cut meanwhile.
func (p *Proxy) attach(l *link, server net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-l.dead:
		return false
	default:
		l.server = server
		return true
	}
}

// untrack forgets l and closes its sockets.
func (p *Proxy) untrack(l *link) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.links, l)
	l.kill()
}

// stop makes l forward nothing more; p.mu must be held.
func (l *link) stop() {
	select {
	case <-l.dead:
	default:
		close(l.dead)
	}
}

// kill stops l and closes its sockets; p.mu must be held.
func (l *link) kill() {
	l.stop()
	l.client.Close()
	if l.server != nil {
		l.server.Close()
	}
}

// pipe copies src to dst until src ends, then half-closes dst so the peer
// sees the end of the stream while data in the other direction still flows.
// What it has read waits while the proxy is held; the client's bytes are
// matched against the pattern CutAfter armed.
func (p *Proxy) pipe(l *link, dst, src net.Conn, fromClient bool) {
	buf := make([]byte, 32<<10)
	var tail []byte // the end of earlier chunks, for a pattern split between them
	for {
		n, err := src.Read(buf)
		// Even the end of the stream is held: a FIN is a packet too.
		if !p.admit(l) {
			return
		}
		if n > 0 {
			var tripped bool
			if fromClient {
				tripped, tail = p.trip(l, tail, buf[:n])
			}
			if _, err := dst.Write(buf[:n]); err != nil {
				return
			}
			if tripped {
				p.mu.Lock()
				l.kill()
				p.mu.Unlock()
				return
			}
		}
		if err != nil {
			break
		}
	}
	if tc, ok := dst.(*net.TCPConn); ok {
		tc.CloseWrite()
		return
	}
	dst.Close()
}
