package wsgateway

import (
	"bytes"
	"encoding/json"
	"strings"
)

// maxGuildsPerShard is Discord's limit; a session that would hold more is
// closed with 4011 Sharding required.
const maxGuildsPerShard = 2500

// handle processes one payload from the client.
func (c *conn) handle(msg []byte) {
	var p inbound
	if err := json.Unmarshal(msg, &p); err != nil || p.Op == nil {
		c.fail(CloseDecodeError)
		return
	}
	switch *p.Op {
	case opHeartbeat:
		c.heartbeat(p.D)
	case opIdentify:
		c.identify(p.D)
	case opResume:
		c.resume(p.D)
	case opPresenceUpdate, opVoiceStateUpdate, opRequestMembers, opRequestSoundboard:
		// Accepted and otherwise ignored: the simulator models no presence,
		// voice or member chunking.
		switch {
		case !c.authenticated():
			c.fail(CloseNotAuthenticated)
		case !isObject(p.D):
			c.fail(CloseDecodeError)
		}
	default:
		c.fail(CloseUnknownOpcode)
	}
}

func (c *conn) authenticated() bool {
	c.g.mu.Lock()
	defer c.g.mu.Unlock()
	return c.session != nil
}

// heartbeat answers op 1, whose d is the last sequence number or null.
func (c *conn) heartbeat(d json.RawMessage) {
	var seq *int64
	if len(d) > 0 && json.Unmarshal(d, &seq) != nil {
		c.fail(CloseDecodeError)
		return
	}
	c.heartbeatReceived()
	c.send(frame(opHeartbeatAck, nil))
}

// bareToken strips the "Bot " prefix discordgo sends; Discord accepts both.
func bareToken(token string) string {
	return strings.TrimPrefix(token, "Bot ")
}

func (c *conn) identify(d json.RawMessage) {
	c.g.mu.Lock()
	c.g.stats.Identifies++
	c.g.mu.Unlock()
	if c.authenticated() {
		c.fail(CloseAlreadyAuthenticated)
		return
	}
	var id identifyData
	if err := json.Unmarshal(d, &id); err != nil || id.Token == nil || !isObject(id.Properties) {
		c.fail(CloseDecodeError)
		return
	}
	token := bareToken(*id.Token)
	if !c.g.accepts(token) {
		c.fail(CloseAuthenticationFailed)
		return
	}
	shard := [2]int{0, 1}
	if id.Shard != nil {
		if len(id.Shard) != 2 || id.Shard[1] < 1 || id.Shard[0] < 0 || id.Shard[0] >= id.Shard[1] {
			c.fail(CloseInvalidShard)
			return
		}
		shard = [2]int{id.Shard[0], id.Shard[1]}
	}
	switch {
	case id.Intents == nil || *id.Intents < 0 || *id.Intents&^knownIntents != 0:
		c.fail(CloseInvalidIntents)
		return
	case *id.Intents&c.g.disallowed() != 0:
		c.fail(CloseDisallowedIntents)
		return
	}

	ready := c.g.ready(shard[0], shard[1], *id.Intents&intentGuildPresences != 0)
	if len(ready.Guilds) > maxGuildsPerShard {
		c.fail(CloseShardingRequired)
		return
	}
	stubs := make([]unavailableGuild, 0, len(ready.Guilds))
	for _, raw := range ready.Guilds {
		var gd struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(raw, &gd); err != nil || gd.ID == "" {
			c.g.log.Error("gateway ready guild without id", "err", err)
			c.fail(CloseUnknownError)
			return
		}
		stubs = append(stubs, unavailableGuild{ID: gd.ID, Unavailable: true})
	}

	var user struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(ready.User, &user); err != nil || user.ID == "" {
		c.g.log.Error("gateway ready user without id", "err", err)
		c.fail(CloseUnknownError)
		return
	}
	s := newSession(token, shard, *id.Intents, user.ID, c.g.replayLimit, c.resumeURL)
	data := readyData{
		V:                c.version,
		User:             ready.User,
		Guilds:           stubs,
		SessionID:        s.id,
		ResumeGatewayURL: c.resumeURL,
		Application:      ready.Application,
	}
	if id.Shard != nil {
		data.Shard = &shard
	}
	readyJSON, err := json.Marshal(data)
	if err != nil {
		c.g.log.Error("gateway ready not encodable", "err", err)
		c.fail(CloseUnknownError)
		return
	}

	if c.start(s, token, readyJSON, ready.Guilds) == startExhausted {
		c.g.tokenReset()
	}
}

// start registers s, a session just identified, and sends READY and the
// GUILD_CREATEs, unless the session start limit refuses it.
func (c *conn) start(s *session, token string, readyJSON []byte, guilds []json.RawMessage) startResult {
	c.g.mu.Lock()
	defer c.g.mu.Unlock()
	switch {
	case c.closed:
		return startOK
	case c.session != nil:
		c.g.closeLocked(c, CloseAlreadyAuthenticated)
		return startOK
	}
	switch res := c.g.starts.start(token, s.shard[0], c.g.clock.Now()); res {
	case startTooSoon:
		c.send(frame(opInvalidSession, false))
		return res
	case startExhausted:
		// "Upon hitting this limit, all active sessions for the app will
		// be terminated, the bot token will be reset".
		c.g.stats.TokenResets++
		c.g.log.Warn("gateway session start limit exceeded: sessions terminated, token reset")
		for other := range c.g.conns {
			c.g.closeLocked(other, CloseAuthenticationFailed)
		}
		clear(c.g.sessions)
		return res
	}
	c.g.expireLocked()
	c.g.sessions[s.id] = s
	s.conn = c
	c.session = s
	c.send(s.record("READY", readyJSON))
	// GUILD_CREATE is a GUILDS event: without it, READY's unavailable
	// guilds are all a session hears of them.
	for _, raw := range guilds {
		if s.intents&intentGuilds != 0 {
			c.send(s.record("GUILD_CREATE", compact(raw)))
		}
	}
	c.g.log.Debug("gateway session identified", "shard", s.shard)
	return startOK
}

// accepts reports whether token may authenticate: Authorize takes it and
// no exceeded start limit has reset it.
func (g *Gateway) accepts(token string) bool {
	g.mu.Lock()
	revoked := g.starts.isRevoked(token)
	g.mu.Unlock()
	return !revoked && g.authorize(token)
}

// compact strips insignificant whitespace so a guild object given indented
// still makes one compact frame.
func compact(raw json.RawMessage) []byte {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}

func (c *conn) resume(d json.RawMessage) {
	if c.authenticated() {
		c.fail(CloseAlreadyAuthenticated)
		return
	}
	var r resumeData
	if err := json.Unmarshal(d, &r); err != nil || r.Token == nil || r.SessionID == nil {
		c.fail(CloseDecodeError)
		return
	}
	token := bareToken(*r.Token)
	if !c.g.accepts(token) {
		c.fail(CloseAuthenticationFailed)
		return
	}
	var seq int64
	if r.Seq != nil {
		seq = *r.Seq
	}

	c.g.mu.Lock()
	defer c.g.mu.Unlock()
	if c.closed {
		return
	}
	c.g.expireLocked()
	s := c.g.sessions[*r.SessionID]
	switch {
	case s == nil || !s.ownedBy(token):
		c.send(frame(opInvalidSession, false))
		return
	case seq > s.seq || seq < 0:
		c.g.closeLocked(c, CloseInvalidSeq)
		delete(c.g.sessions, s.id)
		return
	case !s.replayableFrom(seq):
		delete(c.g.sessions, s.id)
		c.send(frame(opInvalidSession, false))
		return
	}
	if old := s.conn; old != nil {
		// A zombie connection still holds the session; the resume wins.
		old.session = nil
		s.conn = nil
		c.g.closeLocked(old, CloseUnknownError)
	}
	s.conn = c
	c.session = s
	for _, f := range s.since(seq) {
		c.send(f)
	}
	c.send(s.resumed())
	c.g.stats.Resumes++
	if c.url != s.resumeURL {
		c.g.stats.ResumesElsewhere++
		c.reconnectSoon(s)
	}
	c.g.log.Debug("gateway session resumed", "from_seq", seq, "on_resume_url", c.url == s.resumeURL)
}

// reconnectSoon models Discord's answer to a resume made elsewhere than on
// resume_gateway_url ("it will experience disconnects at a higher rate
// than normal"): one heartbeat interval later the session is asked to
// reconnect (op 7), if it is still on this connection.
func (c *conn) reconnectSoon(s *session) {
	c.g.clock.AfterFunc(c.g.interval, func() {
		c.g.mu.Lock()
		defer c.g.mu.Unlock()
		if !c.closed && c.session == s {
			c.send(frame(opReconnect, nil))
		}
	})
}
