package gateway

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

// conn is one gateway connection's socket, below discordgo's websocket.
// It passes Discord's bytes on unchanged, frame by frame, and reads the
// frames that matter on the way (see inspect). Frames from a server are
// never masked; with payload compression off, payloads are JSON text.
type conn struct {
	net.Conn
	// identify is set for a connection that sends IDENTIFY: its text
	// frames are decoded until READY, whatever their size.
	identify  bool
	onReady   func(ready)
	onResumed func()
	now       func() time.Time
	// heard is when bytes last came from Discord (UnixNano on now's
	// clock): where a RESUME's replay starts (replay.go).
	heard atomic.Int64

	// Read side: gorilla reads from one goroutine at a time.
	chunk    []byte
	in       []byte // read from the socket, not yet scanned
	out      []byte // scanned, for gorilla
	upgraded bool   // the HTTP upgrade answer has passed
	err      error  // returned once out is drained

	mu       sync.Mutex
	end      ending
	interval time.Duration // HELLO's heartbeat_interval
	unacked  time.Time     // when the oldest heartbeat without an ACK went out (wall clock)
	// unwatch stops dropping the socket when the session closes, once
	// discordgo's Open is done with it.
	unwatch func() bool

	closeOnce sync.Once
	closed    chan struct{} // discordgo closed the connection
}

// ending is what Discord said as a connection ended.
type ending struct {
	code      int  // the close code Discord sent; 0 for none
	invalid   bool // Discord sent INVALID_SESSION
	resumable bool // its d
	zombie    bool // Discord went silent: herald dropped the connection (heartbeat.go)
}

// ready is what herald keeps of READY.
type ready struct {
	ResumeGatewayURL string `json:"resume_gateway_url"`
	User             struct {
		ID       string `json:"id"`
		Username string `json:"username"`
	} `json:"user"`
	Guilds []json.RawMessage `json:"guilds"`
}

// errInvalidSession ends a connection on which Discord sent
// INVALID_SESSION; discordgo sees it as a read error.
var errInvalidSession = errors.New("gateway: Discord invalidated the session (INVALID_SESSION)")

const (
	readChunk = 32 << 10
	// smallFrame bounds the other text frames decoded: INVALID_SESSION and
	// RESUMED are a few dozen bytes, dispatches mostly far more.
	smallFrame = 512
	// maxFrame bounds a frame held whole; Discord's largest are a few MB.
	maxFrame         = 1 << 30
	opInvalidSession = 9
)

func newConn(raw net.Conn, identify bool, onReady func(ready), onResumed func(), now func() time.Time) *conn {
	return &conn{Conn: raw, identify: identify, onReady: onReady, onResumed: onResumed, now: now, closed: make(chan struct{})}
}

// lastHeard is when bytes last came from Discord; zero if none did.
func (c *conn) lastHeard() time.Time {
	if n := c.heard.Load(); n != 0 {
		return time.Unix(0, n)
	}
	return time.Time{}
}

func (c *conn) Read(p []byte) (int, error) {
	for len(c.out) == 0 {
		if c.err != nil {
			return 0, c.err
		}
		if c.chunk == nil {
			c.chunk = make([]byte, readChunk)
		}
		n, err := c.Conn.Read(c.chunk)
		if n > 0 {
			c.heard.Store(c.now().UnixNano())
		}
		c.in = append(c.in, c.chunk[:n]...)
		c.scan()
		if err != nil && c.err == nil {
			c.err = err
		}
	}
	n := copy(p, c.out)
	c.out = c.out[n:]
	return n, nil
}

// scan moves the complete frames of in to out, after the HTTP answer
// that upgraded the connection.
func (c *conn) scan() {
	if !c.upgraded {
		i := bytes.Index(c.in, []byte("\r\n\r\n"))
		if i < 0 {
			return
		}
		c.pass(i + 4)
		c.upgraded = true
	}
	for c.err == nil {
		hdr, size, ok := frameSize(c.in)
		switch {
		case !ok:
			return
		case size > maxFrame:
			c.err = errors.New("gateway: Discord sent a frame over 1 GiB")
			return
		case len(c.in) < hdr+size:
			return
		case !c.inspect(c.in[0], c.in[hdr:hdr+size]):
			// Swallowed: the connection ends here, without a close
			// frame, so Discord keeps a resumable session resumable.
			c.in = c.in[hdr+size:]
			c.err = errInvalidSession
			c.Conn.Close()
			return
		}
		c.pass(hdr + size)
	}
}

func (c *conn) pass(n int) {
	c.out = append(c.out, c.in[:n]...)
	c.in = c.in[n:]
}

// frameSize reads the header of the websocket frame b starts with: its
// length and its payload's. ok is false while the header is incomplete.
func frameSize(b []byte) (hdr, size int, ok bool) {
	if len(b) < 2 {
		return 0, 0, false
	}
	hdr, n := 2, uint64(b[1]&0x7f)
	switch n {
	case 126:
		hdr = 4
		if len(b) < hdr {
			return 0, 0, false
		}
		n = uint64(binary.BigEndian.Uint16(b[2:]))
	case 127:
		hdr = 10
		if len(b) < hdr {
			return 0, 0, false
		}
		n = min(binary.BigEndian.Uint64(b[2:]), maxFrame+1)
	}
	if b[1]&0x80 != 0 {
		hdr += 4 // a masking key
	}
	return hdr, int(n), len(b) >= hdr
}

// inspect reads one frame on its way to discordgo and reports whether to
// pass it on: a close frame's code, INVALID_SESSION (not passed on),
// READY and RESUMED. Fragmented messages are not read; Discord sends none.
func (c *conn) inspect(b0 byte, payload []byte) bool {
	fin, op := b0&0x80 != 0, int(b0&0x0f)
	switch {
	case op == websocket.CloseMessage:
		code := websocket.CloseNoStatusReceived
		if len(payload) >= 2 {
			code = int(binary.BigEndian.Uint16(payload))
		}
		c.ended(ending{code: code})
	case op == websocket.TextMessage && fin && (len(payload) <= smallFrame || c.identify):
		var p struct {
			Op int             `json:"op"`
			T  string          `json:"t"`
			D  json.RawMessage `json:"d"`
		}
		if json.Unmarshal(payload, &p) != nil {
			return true // discordgo reports it
		}
		switch {
		case p.Op == opHello, p.Op == opHeartbeatACK:
			c.heardOp(p.Op, p.D)
		case p.Op == opInvalidSession:
			c.ended(ending{invalid: true, resumable: string(p.D) == "true"})
			return false
		case p.Op == 0 && p.T == "READY":
			c.identify = false
			var r ready
			_ = json.Unmarshal(p.D, &r) // a READY without the fields leaves nothing to resume
			c.onReady(r)
		case p.Op == 0 && p.T == "RESUMED":
			c.onResumed()
		}
	}
	return true
}

// ended records the first thing Discord said about the connection's end.
func (c *conn) ended(e ending) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.end == (ending{}) {
		c.end = e
	}
}

func (c *conn) ending() ending {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.end
}

// Close is discordgo closing the connection: the supervisor's cue.
func (c *conn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return c.Conn.Close()
}
