// Package wsgateway is the simulator's Discord gateway: the websocket that
// GET /gateway points bots at. It models Discord's documented protocol
// (HELLO, IDENTIFY/READY, heartbeats, RESUME with replay on
// resume_gateway_url, INVALID_SESSION, RECONNECT, the gateway close codes,
// the 120-commands-per-minute limit and the session start limit) closely
// enough that a stock discordgo Session runs against it unmodified.
package wsgateway

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	"github.com/jonboulle/clockwork"

	"github.com/herald-bot/herald/internal/discord/sim/jsontree"
)

// Defaults for the zero Config fields.
const (
	DefaultHeartbeatInterval = 41250 * time.Millisecond
	DefaultReplayLimit       = 4096
)

// Config configures a Gateway. Only Ready is required.
type Config struct {
	Clock             clockwork.Clock         // nil = real clock
	HeartbeatInterval time.Duration           // default 41250 ms; the sim passes it already scaled
	Authorize         func(token string) bool // gets the token without "Bot "; nil accepts all; false → close 4004
	Logger            *slog.Logger            // nil discards; tokens are never logged

	// Ready is called on each valid IDENTIFY, outside the gateway's lock;
	// presences says whether the session has the Guild Presences intent,
	// without which a GUILD_CREATE lists only the bot and members in voice.
	Ready func(shardID, shardCount int, presences bool) Ready

	// DisallowedIntents returns the intent bits the application may not
	// use (privileged intents not enabled for it), asked at each IDENTIFY;
	// identifying with one closes with 4014. nil allows every intent.
	DisallowedIntents func() int64
	// ResumeWindow is how long a disconnected session stays resumable.
	// Discord says "a few minutes"; the default is four heartbeat intervals
	// (2m45s at Discord's interval), so it scales with HeartbeatInterval.
	ResumeWindow time.Duration
	// ReplayLimit bounds the dispatches buffered per session for RESUME;
	// default DefaultReplayLimit. A resume from before the oldest buffered
	// dispatch gets INVALID_SESSION.
	ReplayLimit int

	// SessionStarts is the session start limit at start; a zero Total
	// means none (every IDENTIFY starts a session). StartWindow (default
	// 24 h) is how often Remaining refills to Total, IdentifyWindow
	// (default 5 s) the max_concurrency window; the sim passes both
	// already scaled.
	SessionStarts  StartLimit
	StartWindow    time.Duration
	IdentifyWindow time.Duration
	// TokenReset is called, outside the gateway's lock, when an IDENTIFY
	// beyond the start limit makes Discord reset the bot's token; the
	// gateway itself closes every session with 4004 and refuses the old
	// token from then on.
	TokenReset func()
}

// Ready is what a new session receives: the READY payload's user and
// application, and one GUILD_CREATE per guild after it.
type Ready struct {
	User        json.RawMessage   // the bot user object
	Application json.RawMessage   // {"id":..., "flags":...}
	Guilds      []json.RawMessage // full guild objects, already filtered to the shard
}

// Gateway serves the gateway websocket and holds every session.
type Gateway struct {
	clock        clockwork.Clock
	interval     time.Duration
	authorize    func(string) bool
	ready        func(shardID, shardCount int, presences bool) Ready
	log          *slog.Logger
	disallowed   func() int64
	resumeWindow time.Duration
	replayLimit  int
	tokenReset   func()
	upgrader     websocket.Upgrader

	wg sync.WaitGroup // connections' goroutines

	mu       sync.Mutex
	closed   bool
	conns    map[*conn]struct{}
	sessions map[string]*session
	starts   starts
	stats    Stats
}

// Stats counts what the gateway has seen since it started.
type Stats struct {
	Sessions    int `json:"sessions"`    // connected now
	Connections int `json:"connections"` // websocket connections accepted
	Identifies  int `json:"identifies"`  // IDENTIFY payloads received
	Resumes     int `json:"resumes"`     // sessions resumed
	// ResumesElsewhere are the resumes not made on the session's
	// resume_gateway_url; Discord disconnects such a session again soon.
	ResumesElsewhere int `json:"resumes_elsewhere"`
	// TokenResets are the IDENTIFYs beyond the session start limit.
	TokenResets int `json:"token_resets"`
}

// New returns a Gateway. It panics if cfg.Ready is nil.
func New(cfg Config) *Gateway {
	if cfg.Ready == nil {
		panic("wsgateway: Config.Ready is nil")
	}
	g := &Gateway{
		clock:        cfg.Clock,
		interval:     cfg.HeartbeatInterval,
		authorize:    cfg.Authorize,
		ready:        cfg.Ready,
		log:          cfg.Logger,
		disallowed:   cfg.DisallowedIntents,
		resumeWindow: cfg.ResumeWindow,
		replayLimit:  cfg.ReplayLimit,
		tokenReset:   cfg.TokenReset,
		// Bots send no Origin header; the simulator has no browser callers.
		upgrader: websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }},
		conns:    make(map[*conn]struct{}),
		sessions: make(map[string]*session),
	}
	if g.clock == nil {
		g.clock = clockwork.NewRealClock()
	}
	if g.interval <= 0 {
		g.interval = DefaultHeartbeatInterval
	}
	if g.disallowed == nil {
		g.disallowed = func() int64 { return 0 }
	}
	if g.authorize == nil {
		g.authorize = func(string) bool { return true }
	}
	if g.log == nil {
		g.log = slog.New(slog.DiscardHandler)
	}
	if g.resumeWindow <= 0 {
		g.resumeWindow = 4 * g.interval
	}
	if g.replayLimit <= 0 {
		g.replayLimit = DefaultReplayLimit
	}
	if g.tokenReset == nil {
		g.tokenReset = func() {}
	}
	g.starts = newStarts(cfg, g.clock.Now())
	return g
}

// Dispatch sends an event to every session whose shard owns guildID
// ((guild_id >> 22) % shard_count == shard_id), or to every session when
// guildID is "", and only to sessions whose intents cover eventType. Sessions
// that are disconnected but resumable buffer it for their RESUME.
func (g *Gateway) Dispatch(guildID, eventType string, data any) {
	g.dispatch(guildID, eventType, data, nil, 0)
}

// DispatchMessage is Dispatch for an event that carries message content
// (MESSAGE_CREATE, MESSAGE_UPDATE): sessions that identified without the
// Message Content privileged intent receive withoutContent instead of data.
// A nil withoutContent sends data to every session, for the messages
// Discord never blanks (DMs, the bot's own, those that mention it).
func (g *Gateway) DispatchMessage(guildID, eventType string, data, withoutContent any) {
	g.dispatch(guildID, eventType, data, withoutContent, intentMessageContent)
}

// DispatchGuild is Dispatch for a GUILD_CREATE: sessions without the
// Guild Presences intent receive withoutPresences, whose members are only
// the bot and those in voice ("Guild Create", gateway events).
func (g *Gateway) DispatchGuild(guildID string, data, withoutPresences any) {
	g.dispatch(guildID, "GUILD_CREATE", data, withoutPresences, intentGuildPresences)
}

// dispatch sends data, or alt to the sessions without intent when alt is
// not nil. Each is encoded once, by jsontree: the simulator renders
// events as map trees.
func (g *Gateway) dispatch(guildID, eventType string, data, alt any, intent int64) {
	payload, err := jsontree.Marshal(data)
	if err != nil {
		g.log.Error("gateway dispatch not encodable", "event", eventType, "err", err)
		return
	}
	altPayload := payload
	if alt != nil {
		if altPayload, err = jsontree.Marshal(alt); err != nil {
			g.log.Error("gateway dispatch not encodable", "event", eventType, "err", err)
			return
		}
	}
	var guild uint64
	if guildID != "" {
		if guild, err = strconv.ParseUint(guildID, 10, 64); err != nil {
			g.log.Error("gateway dispatch with invalid guild id", "event", eventType, "guild_id", guildID)
			return
		}
	}
	about := concerned(eventType, payload)
	g.mu.Lock()
	defer g.mu.Unlock()
	g.expireLocked()
	for _, s := range g.sessions {
		// "Gateway events that do not contain a guild_id will only be
		// sent to the first shard (shard_id: 0)."
		if guildID == "" && s.shard[0] != 0 || guildID != "" && int((guild>>22)%uint64(s.shard[1])) != s.shard[0] {
			continue
		}
		if !wants(s.intents, eventType, guildID != "") && !reachesSelf(s.intents, eventType, about, s.userID) {
			continue
		}
		data := payload
		if s.intents&intent == 0 {
			data = altPayload
		}
		f := s.record(eventType, data)
		if s.conn != nil {
			s.conn.send(f)
		}
	}
}

// Reconnect sends op 7 Reconnect to every connected session. Sessions stay
// resumable; the clients are expected to reconnect and RESUME.
func (g *Gateway) Reconnect() {
	f := frame(opReconnect, nil)
	g.mu.Lock()
	defer g.mu.Unlock()
	for c := range g.conns {
		if c.session != nil {
			c.send(f)
		}
	}
}

// Disconnect closes every connection with code. Sessions stay resumable
// unless the code ends them (1000, 1001, 4004, 4007, 4010-4014). Code 1006
// drops the connections without a close frame, like a network failure.
func (g *Gateway) Disconnect(code int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for c := range g.conns {
		g.closeLocked(c, code)
	}
}

// Zombie makes every connected session's connection go silent, as one
// that died without closing: the gateway sends nothing more on it (no
// heartbeat ACK, no dispatch) and ignores what the client sends, while the
// session numbers and buffers its dispatches for a RESUME. Discord's
// "Sending Heartbeats" tells a client that gets no ACK between two
// heartbeats to close with any code but 1000 or 1001 and resume; a 1000 or
// 1001 close still reaches the gateway and ends the session.
func (g *Gateway) Zombie() {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.clock.Now()
	for c := range g.conns {
		s := c.session
		if s == nil {
			continue
		}
		c.stopHeartbeatWatch()
		c.outMu.Lock()
		c.silent = true
		c.outMu.Unlock()
		c.session, c.zombie = nil, s
		s.conn, s.leftAt = nil, now
	}
}

// InvalidateSessions sends op 9 Invalid Session with d = resumable to every
// connected session. The connections stay open and unauthenticated, ready
// for IDENTIFY (or RESUME when resumable). When not resumable, every
// session, connected or not, is forgotten.
func (g *Gateway) InvalidateSessions(resumable bool) {
	f := frame(opInvalidSession, resumable)
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.clock.Now()
	for c := range g.conns {
		if c.session == nil {
			continue
		}
		c.session.conn = nil
		c.session.leftAt = now
		c.session = nil
		c.send(f)
	}
	if !resumable {
		clear(g.sessions)
	}
}

// Sessions returns how many sessions are connected right now.
func (g *Gateway) Sessions() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.sessionsLocked()
}

func (g *Gateway) sessionsLocked() int {
	n := 0
	for c := range g.conns {
		if c.session != nil {
			n++
		}
	}
	return n
}

// Stats returns the gateway's counters.
func (g *Gateway) Stats() Stats {
	g.mu.Lock()
	defer g.mu.Unlock()
	st := g.stats
	st.Sessions = g.sessionsLocked()
	return st
}

// Close closes every connection with 1001 Going Away, forgets every session
// and waits for the connections' goroutines. Later connections get 503.
func (g *Gateway) Close() {
	g.mu.Lock()
	g.closed = true
	for c := range g.conns {
		g.closeLocked(c, websocket.CloseGoingAway)
	}
	clear(g.sessions)
	g.mu.Unlock()
	g.wg.Wait()
}

// closeLocked closes c with code, first detaching its session, which is
// forgotten unless the code leaves it resumable.
func (g *Gateway) closeLocked(c *conn, code int) {
	if c.closed {
		return
	}
	g.detachLocked(c, code)
	g.log.Info("gateway closed a connection", "code", code)
	if code == websocket.CloseAbnormalClosure {
		// 1006 never travels in a close frame; it is how a dropped
		// connection looks to the client, so drop it.
		c.close(0, "")
		return
	}
	c.close(code, closeReason(code))
}

// dropLocked forgets a connection the client closed (code is its close code,
// 1006 for none), after closing the socket on our side.
func (g *Gateway) dropLocked(c *conn, code int) {
	if c.closed {
		return
	}
	g.detachLocked(c, code)
	g.log.Debug("gateway client disconnected", "code", code)
	c.close(0, "")
}

func (g *Gateway) detachLocked(c *conn, code int) {
	c.closed = true
	delete(g.conns, c)
	if z := c.zombie; z != nil && !resumable(code) && z.conn == nil && g.sessions[z.id] == z {
		delete(g.sessions, z.id)
	}
	s := c.session
	if s == nil {
		return
	}
	c.session = nil
	s.conn = nil
	s.leftAt = g.clock.Now()
	if !resumable(code) {
		delete(g.sessions, s.id)
	}
}

// expireLocked forgets the disconnected sessions whose resume window passed.
func (g *Gateway) expireLocked() {
	now := g.clock.Now()
	for id, s := range g.sessions {
		if s.conn == nil && now.Sub(s.leftAt) > g.resumeWindow {
			delete(g.sessions, id)
		}
	}
}
