package sim_test

import (
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/herald-bot/herald/internal/discord/sim/wsgateway"
	"github.com/herald-bot/herald/internal/discord/simtest"
)

// Gateway intents the tests identify with.
const (
	intentGuilds           = 1 << 0
	intentGuildMessages    = 1 << 9
	intentGuildReactions   = 1 << 10
	intentDirectMessages   = 1 << 12
	intentMessageContent   = 1 << 15
	allTestIntents         = intentGuilds | intentGuildMessages | intentGuildReactions | intentDirectMessages | intentMessageContent
	gatewayTestReadTimeout = 5 * time.Second
)

// gatewayClient is a raw gateway session, for asserting dispatches.
type gatewayClient struct {
	t  *testing.T
	ws *websocket.Conn
}

// gateway connects a session identified with intents and reads READY.
// The world's fake clock first moves past Discord's identify window, so
// sessions opened one after another are not refused as too soon.
func (w *world) gateway(t *testing.T, intents int) *gatewayClient {
	t.Helper()
	w.Clock.Advance(wsgateway.DefaultIdentifyWindow)
	ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(w.URL, "http")+"/gateway-ws?v=10&encoding=json", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	c := &gatewayClient{t: t, ws: ws}
	c.read() // HELLO
	if err := ws.WriteJSON(map[string]any{"op": 2, "d": map[string]any{
		"token": simtest.Token, "intents": intents, "properties": map[string]string{"os": "linux"},
	}}); err != nil {
		t.Fatal(err)
	}
	c.next("READY")
	return c
}

func (c *gatewayClient) read() (typ string, data map[string]any) {
	c.t.Helper()
	_ = c.ws.SetReadDeadline(time.Now().Add(gatewayTestReadTimeout))
	var p struct {
		T string         `json:"t"`
		D map[string]any `json:"d"`
	}
	if err := c.ws.ReadJSON(&p); err != nil {
		c.t.Fatalf("gateway read: %v", err)
	}
	return p.T, p.D
}

// next returns the data of the next dispatch of type typ, skipping others.
func (c *gatewayClient) next(typ string) map[string]any {
	c.t.Helper()
	for {
		if t, d := c.read(); t == typ {
			return d
		}
	}
}

// jsonMap decodes a REST answer into a map.
func jsonMap(t *testing.T, r *simtest.Response) map[string]any {
	t.Helper()
	var m map[string]any
	r.JSON(t, &m)
	return m
}

// jsonList decodes a REST answer into a list of maps.
func jsonList(t *testing.T, r *simtest.Response) []map[string]any {
	t.Helper()
	var l []map[string]any
	r.JSON(t, &l)
	return l
}
