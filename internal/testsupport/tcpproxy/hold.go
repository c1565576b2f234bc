package tcpproxy

// Hold stops forwarding in both directions, on open connections and on new
// ones, without closing any socket: a network partition that sends no RST.
// Clients' writes land in buffers, their reads block, and new connections
// are accepted but carry nothing until Release. Cut still closes everything.
func (p *Proxy) Hold() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.held == nil {
		p.held = make(chan struct{})
	}
}

// Release forwards again and delivers what was held in order, as TCP
// retransmission does once a partition heals.
func (p *Proxy) Release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.held != nil {
		close(p.held)
		p.held = nil
	}
}

// admit blocks while the proxy is held and reports whether l may still
// forward.
func (p *Proxy) admit(l *link) bool {
	for {
		p.mu.Lock()
		held := p.held
		p.mu.Unlock()
		if held == nil {
			select {
			case <-l.dead:
				return false
			default:
				return true
			}
		}
		select {
		case <-held:
		case <-l.dead:
			return false
		}
	}
}
