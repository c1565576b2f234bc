package gateway

import (
	"encoding/json"
	"errors"
	"time"
)

// Zombied connections ("Gateway" › Sending Heartbeats): "If a client does
// not receive a heartbeat ACK between its attempts at sending heartbeats
// ... the client should immediately terminate the connection with any
// close code besides 1000 or 1001, then reconnect and attempt to Resume."
// discordgo alone waits five intervals without an ACK, then closes with
// 1000, which ends the session: the RESUME that follows is refused and
// the events in between are lost. conn watches discordgo's heartbeats go
// out and the ACKs come in, and at a heartbeat that finds the one before
// it unanswered drops the socket without a close frame, so the session
// stays resumable and the supervisor resumes it.

// errZombie fails discordgo's heartbeat write on a zombied connection;
// discordgo then closes the connection, the supervisor's cue.
var errZombie = errors.New("gateway: no heartbeat ACK between two heartbeats (zombied connection)")

const opHello, opHeartbeat, opHeartbeatACK = 10, 1, 11

// Write passes discordgo's bytes to Discord, unless they are a heartbeat
// on a zombied connection.
func (c *conn) Write(p []byte) (int, error) {
	if isHeartbeat(p) && c.beat(time.Now()) {
		c.ended(ending{zombie: true})
		c.Conn.Close()
		return 0, errZombie
	}
	return c.Conn.Write(p)
}

// beat notes a heartbeat going out at now and reports whether the one
// before it is still unanswered. That one must have gone out half an
// interval before: Discord may ask for a heartbeat (op 1), which discordgo
// sends at once, and its ticker may send the next before the ACK is back.
// now is the wall clock, as discordgo's heartbeat ticker is.
func (c *conn) beat(now time.Time) (zombie bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.unacked.IsZero() {
		c.unacked = now
		return false
	}
	return c.interval > 0 && now.Sub(c.unacked) >= c.interval/2
}

// heardOp notes HELLO's interval and the ACKs, from inspect.
func (c *conn) heardOp(op int, d json.RawMessage) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch op {
	case opHello:
		var h struct {
			Interval int64 `json:"heartbeat_interval"`
		}
		if json.Unmarshal(d, &h) == nil {
			c.interval = time.Duration(h.Interval) * time.Millisecond
		}
	case opHeartbeatACK:
		c.unacked = time.Time{}
	}
}

// isHeartbeat reports whether p is one whole client frame holding a
// heartbeat. gorilla writes each frame of a client in one Write: text,
// final, masked, a payload under 126 bytes after the 4-byte mask key. A
// frame written in pieces would not be recognized, leaving discordgo's
// own, slower check.
func isHeartbeat(p []byte) bool {
	const hdr = 6
	if len(p) < hdr || p[0] != 0x81 || p[1]&0x80 == 0 {
		return false
	}
	n := int(p[1] & 0x7f)
	if n >= 126 || n != len(p)-hdr {
		return false
	}
	var buf [125]byte
	payload := buf[:n]
	for i := range payload {
		payload[i] = p[hdr+i] ^ p[2+i%4]
	}
	var f struct {
		Op *int `json:"op"`
	}
	return json.Unmarshal(payload, &f) == nil && f.Op != nil && *f.Op == opHeartbeat
}
