package wsgateway

// The heartbeat watchdog: a client must heartbeat at least once per
// heartbeat interval. When one is due and has not arrived, the gateway asks
// for it with op 1 (Discord "may request additional heartbeats"); if none
// arrives within a further quarter interval the connection is closed with
// 4009 Session timed out. The session stays resumable, as Discord's
// heartbeat docs say a client that misses heartbeats is "forced to Resume".

func (c *conn) startHeartbeatWatch() {
	c.hbMu.Lock()
	defer c.hbMu.Unlock()
	c.deadline = c.g.clock.Now().Add(c.g.interval)
	c.hbTimer = c.g.clock.AfterFunc(c.g.interval, c.heartbeatDue)
}

func (c *conn) stopHeartbeatWatch() {
	c.hbMu.Lock()
	defer c.hbMu.Unlock()
	c.hbDone = true
	c.hbTimer.Stop()
}

// heartbeatReceived restarts the interval. It runs before the ACK is queued,
// so a client that has its ACK knows the new deadline is set.
func (c *conn) heartbeatReceived() {
	c.hbMu.Lock()
	defer c.hbMu.Unlock()
	if c.hbDone {
		return
	}
	c.late = false
	c.deadline = c.g.clock.Now().Add(c.g.interval)
	c.hbTimer.Reset(c.g.interval)
}

// heartbeatDue runs when the timer fires. A heartbeat that raced the timer
// has already moved the deadline, so the timer is just re-armed.
func (c *conn) heartbeatDue() {
	c.hbMu.Lock()
	if c.hbDone {
		c.hbMu.Unlock()
		return
	}
	now := c.g.clock.Now()
	if wait := c.deadline.Sub(now); wait > 0 {
		c.hbTimer.Reset(wait)
		c.hbMu.Unlock()
		return
	}
	if !c.late {
		c.late = true
		grace := c.g.interval / 4
		c.deadline = now.Add(grace)
		c.hbTimer.Reset(grace)
		c.hbMu.Unlock()
		c.send(frame(opHeartbeat, nil))
		return
	}
	c.hbMu.Unlock()
	c.fail(CloseSessionTimedOut)
}
