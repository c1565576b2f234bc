package wsgateway

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	"github.com/jonboulle/clockwork"
)

const (
	// maxPayload is Discord's limit on a payload a client sends; a larger
	// one closes the connection with 4002.
	maxPayload = 4096
	// closeWriteTimeout bounds writing the close frame to a client that
	// stopped reading. It is network I/O, not simulated time.
	closeWriteTimeout = time.Second
)

// conn is one websocket connection. Outbound frames go through an outbox
// drained by a writer goroutine, so senders never block on the network and
// frames queued under Gateway.mu keep their order.
type conn struct {
	g         *Gateway
	ws        *websocket.Conn
	version   int
	url       string      // the URL the client connected to, without query
	resumeURL string      // what READY gives as resume_gateway_url
	zlib      *zlibStream // nil without transport compression; writer only

	// Guarded by g.mu.
	session *session
	closed  bool
	zombie  *session // the session this connection carried when it went silent

	outMu     sync.Mutex
	out       [][]byte
	closing   bool
	silent    bool // Zombie: nothing more is sent or read
	closeCode int
	closeText string
	wake      chan struct{} // capacity 1: the outbox changed

	hbMu     sync.Mutex
	hbTimer  clockwork.Timer
	deadline time.Time // next heartbeat expected by
	late     bool      // a heartbeat request is outstanding
	hbDone   bool

	limiter commandLimiter // read loop only
}

// ServeHTTP is the gateway websocket endpoint. It accepts v=9 or v=10 with
// encoding=json (the default), without transport compression or with
// compress=zlib-stream.
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	closed := g.closed
	if !closed {
		g.wg.Add(1)
	}
	g.mu.Unlock()
	if closed {
		http.Error(w, "gateway closed", http.StatusServiceUnavailable)
		return
	}
	defer g.wg.Done()

	ws, err := g.upgrader.Upgrade(w, r, nil)
	if err != nil {
		g.log.Debug("gateway upgrade failed", "err", err)
		return
	}
	q := r.URL.Query()
	url, resume := endpoints(r)
	c := &conn{g: g, ws: ws, url: url, resumeURL: resume, wake: make(chan struct{}, 1)}
	if q.Get("compress") == "zlib-stream" {
		c.zlib = newZlibStream()
	}
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		c.writeLoop()
	}()
	defer func() { <-writerDone }()

	switch {
	case q.Get("encoding") != "" && q.Get("encoding") != "json":
		c.close(websocket.CloseUnsupportedData, "the simulator supports encoding=json only")
		return
	case q.Get("compress") != "" && c.zlib == nil:
		c.close(websocket.CloseUnsupportedData, "the simulator supports compress=zlib-stream only")
		return
	}
	switch q.Get("v") {
	case "9":
		c.version = 9
	case "10":
		c.version = 10
	default:
		c.close(CloseInvalidAPIVersion, closeReason(CloseInvalidAPIVersion))
		return
	}

	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		c.close(websocket.CloseGoingAway, "")
		return
	}
	g.conns[c] = struct{}{}
	g.stats.Connections++
	g.mu.Unlock()

	c.startHeartbeatWatch()
	c.send(frame(opHello, helloData{HeartbeatInterval: max(g.interval.Milliseconds(), 1)}))
	code := c.readLoop()
	c.stopHeartbeatWatch()

	g.mu.Lock()
	g.dropLocked(c, code)
	g.mu.Unlock()
}

// resumePath ends the resume_gateway_url's path: Discord's is another host
// than the URL sessions start on; the simulator's is another path, so a
// test sees where a client resumed.
const resumePath = "/resume"

// endpoints returns the URL r connected to and the resume_gateway_url
// READY hands out: the same endpoint, without query, below resumePath.
// Trailing slashes (discordgo adds one) do not matter.
func endpoints(r *http.Request) (url, resume string) {
	scheme := "ws"
	if r.TLS != nil {
		scheme = "wss"
	}
	path := strings.TrimSuffix(r.URL.Path, "/")
	url = scheme + "://" + r.Host + path
	return url, scheme + "://" + r.Host + strings.TrimSuffix(path, resumePath) + resumePath
}

// readLoop handles the client's payloads until the connection ends, and
// returns the close code the client sent (1006 when it sent none).
func (c *conn) readLoop() int {
	for {
		kind, msg, err := c.readPayload()
		if err != nil {
			var ce *websocket.CloseError
			if errors.As(err, &ce) {
				return ce.Code
			}
			return websocket.CloseAbnormalClosure
		}
		if c.isClosing() || c.isSilent() {
			continue // drain what the client sent before the close, or to a zombie
		}
		if !c.limiter.allow(c.g.clock.Now()) {
			c.fail(CloseRateLimited)
			continue
		}
		if kind != websocket.TextMessage || len(msg) > maxPayload {
			c.fail(CloseDecodeError)
			continue
		}
		c.handle(msg)
	}
}

// readPayload reads the next message, keeping at most one byte over
// Discord's limit and draining the rest: a payload of any size past 4096
// bytes is a 4002 ("If an event payload does exceed 4096 bytes, the
// connection will be closed with a 4002"), not a websocket-level error.
func (c *conn) readPayload() (int, []byte, error) {
	kind, r, err := c.ws.NextReader()
	if err != nil {
		return 0, nil, err
	}
	msg, err := io.ReadAll(io.LimitReader(r, maxPayload+1))
	if err == nil {
		_, err = io.Copy(io.Discard, r)
	}
	return kind, msg, err
}

// fail closes the connection for a protocol error.
func (c *conn) fail(code int) {
	c.g.mu.Lock()
	defer c.g.mu.Unlock()
	c.g.closeLocked(c, code)
}

// send queues a frame; frames queued after the close, or once the
// connection went silent, are dropped.
func (c *conn) send(f []byte) {
	c.outMu.Lock()
	defer c.outMu.Unlock()
	if c.closing || c.silent {
		return
	}
	c.out = append(c.out, f)
	c.signal()
}

// close queues a close frame after the frames already queued (none when code
// is 0); the writer then closes the socket, which ends the read loop.
func (c *conn) close(code int, text string) {
	c.outMu.Lock()
	defer c.outMu.Unlock()
	if c.closing {
		return
	}
	c.closing, c.closeCode, c.closeText = true, code, text
	c.signal()
}

func (c *conn) isClosing() bool {
	c.outMu.Lock()
	defer c.outMu.Unlock()
	return c.closing
}

func (c *conn) isSilent() bool {
	c.outMu.Lock()
	defer c.outMu.Unlock()
	return c.silent
}

func (c *conn) signal() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// writeLoop writes queued frames in order until the connection closes. A
// server-initiated close sends its close frame and drops the socket at once,
// as Discord does, so a client's own closing handshake cannot change the
// session's fate.
func (c *conn) writeLoop() {
	defer c.ws.Close()
	for range c.wake {
		c.outMu.Lock()
		batch, closing, code, text := c.out, c.closing, c.closeCode, c.closeText
		c.out = nil
		c.outMu.Unlock()
		for _, f := range batch {
			if err := c.write(f); err != nil {
				return
			}
		}
		if closing {
			if code != 0 {
				msg := websocket.FormatCloseMessage(code, text)
				_ = c.ws.WriteControl(websocket.CloseMessage, msg, time.Now().Add(closeWriteTimeout))
			}
			return
		}
	}
}

// write sends one payload: a text frame, or a binary frame of the
// connection's zlib stream.
func (c *conn) write(f []byte) error {
	if c.zlib == nil {
		return c.ws.WriteMessage(websocket.TextMessage, f)
	}
	b, err := c.zlib.compress(f)
	if err != nil {
		return err
	}
	return c.ws.WriteMessage(websocket.BinaryMessage, b)
}
