package tcpproxy

import "bytes"

// CutAfter arms the proxy once: the first chunk a client sends that
// completes pattern, even across chunks of its connection, is forwarded to
// the server in full, then that connection is closed on both sides and not
// one more server byte reaches its client. The server got the request, say a
// COMMIT; the client never learns its outcome. Other connections go on.
func (p *Proxy) CutAfter(pattern []byte) {
	if len(pattern) == 0 {
		panic("tcpproxy: CutAfter needs a non-empty pattern")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.trigger = bytes.Clone(pattern)
}

// trip reports whether chunk, read by l after tail, completes the armed
// pattern. If it does, the proxy is disarmed and l stopped before the chunk
// is forwarded, so nothing the server answers to it gets through. It returns
// the tail to keep: the end of what was seen, one byte short of the pattern.
func (p *Proxy) trip(l *link, tail, chunk []byte) (bool, []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.trigger == nil {
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
