package tcpproxy

import "bytes"

// CutAfter arms the proxy once: the first chunk a client sends that
// completes pattern, even across chunks of its connection, is forwarded to
// the server in full, then that connection is closed on both sides and not
// one more server byte reaches its client. The server got the request, say a
// COMMIT; the client never learns its outcome. Other connections go on.
func (p *Proxy) CutAfter(pattern []byte) { p.CutAfterIn(nil, pattern) }

// CutAfterIn is CutAfter for the connections whose first chunk from the
// client contains conn only (nil: any) — for Postgres, the startup
// message, which names the pool's application_name — so one pool's
// COMMIT is cut while another's go on.
func (p *Proxy) CutAfterIn(conn, pattern []byte) {
	if len(pattern) == 0 {
		panic("tcpproxy: CutAfter needs a non-empty pattern")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.trigger, p.triggerConn = bytes.Clone(pattern), bytes.Clone(conn)
}

// trip reports whether chunk, read by l after tail, completes the armed
// pattern. If it does, the proxy is disarmed and l stopped before the chunk
// is forwarded, so nothing the server answers to it gets through. It returns
// the tail to keep: the end of what was seen, one byte short of the pattern.
func (p *Proxy) trip(l *link, tail, chunk []byte) (bool, []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if l.first == nil {
		l.first = bytes.Clone(chunk)
	}
	if p.trigger == nil || !bytes.Contains(l.first, p.triggerConn) {
		return false, nil
	}
	seen := append(tail, chunk...)
	if bytes.Contains(seen, p.trigger) {
		p.trigger = nil
		l.stop()
		return true, nil
	}
	keep := min(len(seen), len(p.trigger)-1)
	return false, bytes.Clone(seen[len(seen)-keep:])
}
