package wsgateway

import (
	"bytes"
	"compress/zlib"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// zlibFrames reads a zlib-stream connection as a client does: every binary
// frame must end with the sync-flush suffix, and one inflater reads the
// concatenated frames.
type zlibFrames struct {
	t    *testing.T
	ws   *websocket.Conn
	rest []byte
}

func (z *zlibFrames) Read(p []byte) (int, error) {
	if len(z.rest) == 0 {
		_ = z.ws.SetReadDeadline(time.Now().Add(readTimeout))
		kind, msg, err := z.ws.ReadMessage()
		if err != nil {
			return 0, err
		}
		if kind != websocket.BinaryMessage {
			z.t.Errorf("zlib-stream frame of type %d, want binary", kind)
		}
		if !bytes.HasSuffix(msg, []byte{0, 0, 0xff, 0xff}) {
			z.t.Errorf("zlib-stream frame ends % x, want the sync flush 00 00 ff ff", msg[max(0, len(msg)-4):])
		}
		z.rest = msg
	}
	n := copy(p, z.rest)
	z.rest = z.rest[n:]
	return n, nil
}

func TestZlibStreamCompression(t *testing.T) {
	t.Parallel()
	g := New(Config{Ready: testReady(testGuild(1 << 22))})
	base := serve(t, g)
	ws, _, err := websocket.DefaultDialer.Dial(base+"?v=10&encoding=json&compress=zlib-stream", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	zr, err := zlib.NewReader(&zlibFrames{t: t, ws: ws})
	if err != nil {
		t.Fatalf("zlib header: %v", err)
	}
	dec := json.NewDecoder(zr)
	next := func() payload {
		t.Helper()
		var p payload
		if err := dec.Decode(&p); err != nil {
			t.Fatalf("inflate and decode: %v", err)
		}
		return p
	}
	if p := next(); p.Op != opHello {
		t.Fatalf("first payload %v, want HELLO", p)
	}
	// The client's own payloads stay uncompressed text.
	if err := ws.WriteJSON(map[string]any{"op": opIdentify, "d": identifyPayload(testToken, allIntents)}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"READY", "GUILD_CREATE"} {
		if p := next(); p.T == nil || *p.T != want {
			t.Fatalf("got %v, want %s", p, want)
		}
	}
	// Later dispatches continue the same zlib context.
	for i := range 3 {
		g.Dispatch(guildOne, "MESSAGE_CREATE", msg{i})
		p := next()
		if p.T == nil || *p.T != "MESSAGE_CREATE" || string(p.D) != fmt.Sprintf(`{"n":%d}`, i) {
			t.Fatalf("dispatch %d: got %v", i, p)
		}
	}
}
