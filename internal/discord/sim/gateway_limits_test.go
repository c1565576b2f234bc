package sim_test

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/discord/simtest"
)

type gatewayBot struct {
	URL               string `json:"url"`
	Shards            int    `json:"shards"`
	SessionStartLimit struct {
		Total          int   `json:"total"`
		Remaining      int   `json:"remaining"`
		ResetAfter     int64 `json:"reset_after"`
		MaxConcurrency int   `json:"max_concurrency"`
	} `json:"session_start_limit"`
}

func readGatewayBot(t *testing.T, s *simtest.Sim) gatewayBot {
	t.Helper()
	var b gatewayBot
	r := s.Do("GET", "/gateway/bot", nil)
	wantStatus(t, r, 200)
	r.JSON(t, &b)
	return b
}

// GET /gateway/bot reports the session start limit the gateway keeps
// (Discord's gateway docs, "Get Gateway Bot" and "Session Start Limit
// Object": total, remaining, reset_after in milliseconds, max_concurrency;
// 1000 starts a day for a bot): an IDENTIFY spends one, reset_after runs
// on the simulator's clock, and POST /_sim/gateway changes it.
func TestGatewayBotReportsTheSessionStartLimit(t *testing.T) {
	w := newWorld(t)
	b := readGatewayBot(t, w.Sim)
	l := b.SessionStartLimit
	if l.Total != 1000 || l.Remaining != 1000 || l.ResetAfter != (24*time.Hour).Milliseconds() || l.MaxConcurrency != 1 || b.Shards != 1 {
		t.Fatalf("a new bot's GET /gateway/bot: %+v", b)
	}
	start := w.Clock.Now()
	w.gateway(t, intentGuilds) // moves the clock by the identify window
	l = readGatewayBot(t, w.Sim).SessionStartLimit
	if want := (24*time.Hour - w.Clock.Since(start)).Milliseconds(); l.Remaining != 999 || l.ResetAfter != want {
		t.Fatalf("after one session: %+v, want remaining 999 and reset_after %d", l, want)
	}

	total, remaining, resetAfter, concurrency := 2000, 3, int64(60_000), 16
	w.SetSessionStartLimit(sim.StartLimitChange{Total: &total, Remaining: &remaining, ResetAfter: &resetAfter, MaxConcurrency: &concurrency})
	l = readGatewayBot(t, w.Sim).SessionStartLimit
	if l.Total != 2000 || l.Remaining != 3 || l.ResetAfter != 60_000 || l.MaxConcurrency != 16 {
		t.Fatalf("after POST /_sim/gateway: %+v", l)
	}
	if st := w.Gateway(); st.Identifies != 1 || st.SessionStartLimit.Remaining != 3 {
		t.Fatalf("GET /_sim/gateway: %+v", st)
	}
	w.Clock.Advance(time.Minute)
	if l = readGatewayBot(t, w.Sim).SessionStartLimit; l.Remaining != 2000 || l.ResetAfter != (24*time.Hour).Milliseconds() {
		t.Fatalf("after reset_after: %+v", l)
	}

	for _, bad := range []string{`{"remaining": 2001}`, `{"max_concurrency": 0}`, `{"reset_after": -1}`, `{"total": 0}`, `[`} {
		rec := httptest.NewRecorder()
		w.Server.ServeHTTP(rec, httptest.NewRequest("POST", "/_sim/gateway", strings.NewReader(bad)))
		if rec.Code != 400 {
			t.Errorf("POST /_sim/gateway %s = %d, want 400", bad, rec.Code)
		}
	}
	if l = readGatewayBot(t, w.Sim).SessionStartLimit; l.Total != 2000 || l.Remaining != 2000 || l.MaxConcurrency != 16 {
		t.Fatalf("refused changes changed the limit: %+v", l)
	}
}

// An IDENTIFY beyond the session start limit terminates the bot's
// sessions and resets its token (gateway docs, "Identifying": "Upon
// hitting this limit, all active sessions for the app will be terminated,
// the bot token will be reset"): the old token then gets 401 on REST.
func TestSessionStartLimitExceededResetsTheToken(t *testing.T) {
	w := newWorld(t)
	running := w.gateway(t, intentGuilds)
	zero := 0
	w.SetSessionStartLimit(sim.StartLimitChange{Remaining: &zero})
	w.Clock.Advance(5 * time.Second)

	ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(w.URL, "http")+"/gateway-ws?v=10&encoding=json", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	c := &gatewayClient{t: t, ws: ws}
	c.read() // HELLO
	if err := ws.WriteJSON(map[string]any{"op": 2, "d": map[string]any{
		"token": simtest.Token, "intents": intentGuilds, "properties": map[string]string{"os": "linux"},
	}}); err != nil {
		t.Fatal(err)
	}
	for _, conn := range []*websocket.Conn{ws, running.ws} {
		_ = conn.SetReadDeadline(time.Now().Add(gatewayTestReadTimeout))
		for {
			_, _, err := conn.ReadMessage()
			if err == nil {
				continue
			}
			if !websocket.IsCloseError(err, 4004) {
				t.Fatalf("read ended with %v, want close 4004", err)
			}
			break
		}
	}
	wantStatus(t, w.Do("GET", "/users/@me", nil), 401)
	if st := w.Gateway(); st.TokenResets != 1 || st.Sessions != 0 {
		t.Fatalf("GET /_sim/gateway: %+v", st)
	}
	w.ResetToken("the-new-token") // the owner puts the mailed token in
	wantStatus(t, w.DoAs("GET", "/users/@me", "the-new-token", nil), 200)
}
