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
	if !c.g.authorize(token) {
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

	ready := c.g.ready(shard[0], shard[1])
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

	s := newSession(token, shard, *id.Intents, c.g.replayLimit)
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

	c.g.mu.Lock()
	defer c.g.mu.Unlock()
	switch {
	case c.closed:
		return
	case c.session != nil:
		c.g.closeLocked(c, CloseAlreadyAuthenticated)
		return
	}
	c.g.expireLocked()
	c.g.sessions[s.id] = s
	s.conn = c
	c.session = s
	c.send(s.record("READY", readyJSON))
	for _, raw := range ready.Guilds {
		c.send(s.record("GUILD_CREATE", compact(raw)))
	}
	c.g.log.Debug("gateway session identified", "shard", shard)
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
	if !c.g.authorize(token) {
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
	c.g.log.Debug("gateway session resumed", "from_seq", seq)
}
