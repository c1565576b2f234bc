package wsgateway

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

const (
	testToken = "sim-token"
	// readTimeout only guards against a hung test; no assertion depends on it.
	readTimeout = 5 * time.Second
	// allIntents is discordgo's IntentsAllWithoutPrivileged plus the
	// privileged ones.
	allIntents = knownIntents
)

// testGuild builds a guild object whose id lands on shard (id >> 22) % n.
func testGuild(id uint64) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"id":"%d","name":"guild %d","roles":[],"channels":[]}`, id, id))
}

// guildOnShard returns a guild id that shard of count owns.
func guildOnShard(shard, count int, n uint64) uint64 {
	return (uint64(count)*n + uint64(shard)) << 22
}

func testReady(guilds ...json.RawMessage) func(int, int, bool) Ready {
	return func(int, int, bool) Ready {
		return Ready{
			User:        json.RawMessage(`{"id":"100","username":"herald","discriminator":"0","bot":true}`),
			Application: json.RawMessage(`{"id":"200","flags":0}`),
			Guilds:      guilds,
		}
	}
}

// serve starts g on a test server and returns the websocket URL of its
// endpoint, without query.
func serve(t *testing.T, g *Gateway) string {
	t.Helper()
	srv := httptest.NewServer(g)
	t.Cleanup(func() {
		g.Close()
		srv.Close()
	})
	return "ws" + strings.TrimPrefix(srv.URL, "http") + "/gateway-ws"
}

type payload struct {
	Op int             `json:"op"`
	D  json.RawMessage `json:"d"`
	S  *int64          `json:"s"`
	T  *string         `json:"t"`
}

func (p payload) String() string {
	t := "<nil>"
	if p.T != nil {
		t = *p.T
	}
	return fmt.Sprintf("op=%d t=%s d=%s", p.Op, t, p.D)
}

// client is a raw gorilla websocket client speaking the gateway protocol.
type client struct {
	t    *testing.T
	ws   *websocket.Conn
	base string // endpoint URL without query, for reconnecting
}

func dial(t *testing.T, url string) *client {
	t.Helper()
	ws, _, err := websocket.DefaultDialer.Dial(url, nil)
	if err != nil {
		t.Fatalf("dial %s: %v", url, err)
	}
	t.Cleanup(func() { ws.Close() })
	return &client{t: t, ws: ws}
}

// connect dials the v10 JSON endpoint and reads HELLO.
func connect(t *testing.T, base string) *client {
	t.Helper()
	c := dial(t, base+"?v=10&encoding=json")
	c.base = base
	if p := c.read(); p.Op != opHello {
		t.Fatalf("first payload %v, want HELLO", p)
	}
	return c
}

func (c *client) read() payload {
	c.t.Helper()
	_ = c.ws.SetReadDeadline(time.Now().Add(readTimeout))
	kind, msg, err := c.ws.ReadMessage()
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	if kind != websocket.TextMessage {
		c.t.Fatalf("message type %d, want text", kind)
	}
	var p payload
	if err := json.Unmarshal(msg, &p); err != nil {
		c.t.Fatalf("decode %s: %v", msg, err)
	}
	return p
}

// readDispatch reads the next payload and requires it to be the dispatch
// eventType numbered seq.
func (c *client) readDispatch(eventType string, seq int64) payload {
	c.t.Helper()
	p := c.read()
	if p.Op != opDispatch || p.T == nil || *p.T != eventType || p.S == nil || *p.S != seq {
		c.t.Fatalf("got %v s=%v, want dispatch %s s=%d", p, p.S, eventType, seq)
	}
	return p
}

func (c *client) sendJSON(v any) {
	c.t.Helper()
	if err := c.ws.WriteJSON(v); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

func (c *client) sendRaw(kind int, b []byte) {
	c.t.Helper()
	if err := c.ws.WriteMessage(kind, b); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

func (c *client) op(op int, d any) {
	c.t.Helper()
	c.sendJSON(map[string]any{"op": op, "d": d})
}

func identifyPayload(token string, intents int64) map[string]any {
	return map[string]any{
		"token":      token,
		"intents":    intents,
		"properties": map[string]string{"os": "linux", "browser": "test", "device": "test"},
	}
}

// identify sends IDENTIFY, reads READY and returns its session id.
func (c *client) identify() string {
	c.t.Helper()
	c.op(opIdentify, identifyPayload(testToken, allIntents))
	p := c.readDispatch("READY", 1)
	var r struct {
		SessionID string `json:"session_id"`
	}
	if err := json.Unmarshal(p.D, &r); err != nil || r.SessionID == "" {
		c.t.Fatalf("READY %s: no session_id (%v)", p.D, err)
	}
	return r.SessionID
}

func (c *client) resume(sessionID string, seq int64) {
	c.t.Helper()
	c.op(opResume, map[string]any{"token": testToken, "session_id": sessionID, "seq": seq})
}

// expectClose reads until the server closes and requires code.
func (c *client) expectClose(code int) {
	c.t.Helper()
	for {
		_ = c.ws.SetReadDeadline(time.Now().Add(readTimeout))
		_, msg, err := c.ws.ReadMessage()
		if err == nil {
			continue // frames queued before the close
		}
		var ce *websocket.CloseError
		if !errors.As(err, &ce) {
			c.t.Fatalf("read ended with %v, want close %d (last frame %s)", err, code, msg)
		}
		if ce.Code != code {
			c.t.Fatalf("closed with %d %q, want %d", ce.Code, ce.Text, code)
		}
		return
	}
}

// drop closes the socket without a closing handshake, as a network failure
// would.
func (c *client) drop() {
	c.ws.NetConn().Close()
}

// invalidSession requires the next payload to be op 9 with d = resumable.
func (c *client) invalidSession(resumable bool) {
	c.t.Helper()
	p := c.read()
	if p.Op != opInvalidSession || string(p.D) != fmt.Sprint(resumable) {
		c.t.Fatalf("got %v, want INVALID_SESSION d=%v", p, resumable)
	}
}

// newTestLogger logs everything, as text, to w. Handlers of log/slog
// serialize their writes, so w is written from one goroutine at a time.
func newTestLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}
