package wsgateway

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/jonboulle/clockwork"

	"github.com/herald-bot/herald/internal/testsupport/wait"
)

const guildOne = "4194304" // 1 << 22, on shard 0 of any count

type msg struct {
	N int `json:"n"`
}

func TestResumeReplaysMissedDispatchesInOrder(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		leave func(*client)
	}{
		{name: "connection dropped", leave: func(c *client) { c.drop() }},
		{name: "client closed with 4000", leave: func(c *client) {
			_ = c.ws.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(4000, ""))
			c.expectClose(4000) // the server echoes the close
		}},
		{name: "client closed with 1012 as discordgo does on op 7", leave: func(c *client) {
			_ = c.ws.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseServiceRestart, ""))
			c.expectClose(websocket.CloseServiceRestart)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g := New(Config{Ready: testReady(testGuild(1 << 22))})
			base := serve(t, g)
			c := connect(t, base)
			id := c.identify()
			c.readDispatch("GUILD_CREATE", 2)
			g.Dispatch(guildOne, "GUILD_ROLE_UPDATE", msg{1})
			c.readDispatch("GUILD_ROLE_UPDATE", 3)
			g.Dispatch(guildOne, "GUILD_ROLE_UPDATE", msg{2}) // sent, but the client will not have read it

			tt.leave(c)
			waitSessions(t, g, 0)
			g.Dispatch(guildOne, "GUILD_ROLE_UPDATE", msg{3})
			g.Dispatch("", "INTERACTION_CREATE", msg{4})

			c = connect(t, base)
			c.resume(id, 3)
			for i, typ := range []string{"GUILD_ROLE_UPDATE", "GUILD_ROLE_UPDATE", "INTERACTION_CREATE"} {
				p := c.readDispatch(typ, int64(4+i))
				if want := `{"n":` + string(rune('2'+i)) + `}`; string(p.D) != want {
					t.Errorf("replayed %s, want %s", p.D, want)
				}
			}
			c.readDispatch("RESUMED", 7)
			g.Dispatch(guildOne, "GUILD_ROLE_DELETE", msg{5})
			c.readDispatch("GUILD_ROLE_DELETE", 8)
			if n := g.Sessions(); n != 1 {
				t.Errorf("Sessions() = %d after resume, want 1", n)
			}
		})
	}
}

func TestResumeFromReadyReplaysGuildCreates(t *testing.T) {
	t.Parallel()
	g := New(Config{Ready: testReady(testGuild(1<<22), testGuild(2<<22))})
	base := serve(t, g)
	c := connect(t, base)
	id := c.identify()
	c.drop()
	waitSessions(t, g, 0)

	c = connect(t, base)
	c.resume(id, 1)
	c.readDispatch("GUILD_CREATE", 2)
	c.readDispatch("GUILD_CREATE", 3)
	c.readDispatch("RESUMED", 4)
}

func TestResumeTakesOverAZombieConnection(t *testing.T) {
	t.Parallel()
	g := New(Config{Ready: testReady()})
	base := serve(t, g)
	old := connect(t, base)
	id := old.identify()

	c := connect(t, base)
	c.resume(id, 1)
	c.readDispatch("RESUMED", 2)
	old.expectClose(CloseUnknownError)
	g.Dispatch("", "INTERACTION_CREATE", msg{1})
	c.readDispatch("INTERACTION_CREATE", 3)
}

func TestResumeRefused(t *testing.T) {
	t.Parallel()
	clock := clockwork.NewFakeClock()
	tests := []struct {
		name  string
		cfg   Config
		leave func(*testing.T, *Gateway, *client) // ends the first connection
	}{
		{name: "client closed with 1000", leave: func(t *testing.T, g *Gateway, c *client) {
			_ = c.ws.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""))
			c.expectClose(websocket.CloseNormalClosure)
			waitSessions(t, g, 0)
		}},
		{name: "client closed with 1001", leave: func(t *testing.T, g *Gateway, c *client) {
			_ = c.ws.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseGoingAway, ""))
			c.expectClose(websocket.CloseGoingAway)
			waitSessions(t, g, 0)
		}},
		{name: "server closed with 4004", leave: func(t *testing.T, g *Gateway, c *client) {
			g.Disconnect(CloseAuthenticationFailed)
			c.expectClose(CloseAuthenticationFailed)
		}},
		{name: "server closed with 4007", leave: func(t *testing.T, g *Gateway, c *client) {
			g.Disconnect(CloseInvalidSeq)
			c.expectClose(CloseInvalidSeq)
		}},
		{name: "resume window passed", cfg: Config{Clock: clock, ResumeWindow: time.Minute},
			leave: func(t *testing.T, g *Gateway, c *client) {
				c.drop()
				waitSessions(t, g, 0)
				clock.Advance(time.Minute + time.Millisecond)
			}},
		{name: "missed dispatches beyond the replay buffer", cfg: Config{ReplayLimit: 2},
			leave: func(t *testing.T, g *Gateway, c *client) {
				c.drop()
				waitSessions(t, g, 0)
				for i := range 3 {
					g.Dispatch("", "INTERACTION_CREATE", msg{i})
				}
			}},
		{name: "sessions invalidated", leave: func(t *testing.T, g *Gateway, c *client) {
			c.drop()
			waitSessions(t, g, 0)
			g.InvalidateSessions(false)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := tt.cfg
			cfg.Ready = testReady()
			g := New(cfg)
			base := serve(t, g)
			c := connect(t, base)
			id := c.identify()
			tt.leave(t, g, c)

			c = connect(t, base)
			c.resume(id, 1)
			c.invalidSession(false)
			// The connection stays open for a fresh IDENTIFY, as discordgo expects.
			if newID := c.identify(); newID == id {
				t.Errorf("IDENTIFY after INVALID_SESSION reused session %s", id)
			}
		})
	}
}

func TestResumeWithinWindowAndBuffer(t *testing.T) {
	t.Parallel()
	clock := clockwork.NewFakeClock()
	g := New(Config{Clock: clock, Ready: testReady(), ResumeWindow: time.Minute, ReplayLimit: 2})
	base := serve(t, g)
	c := connect(t, base)
	id := c.identify()
	c.drop()
	waitSessions(t, g, 0)
	clock.Advance(time.Minute)
	g.Dispatch("", "INTERACTION_CREATE", msg{1})
	g.Dispatch("", "INTERACTION_CREATE", msg{2})

	c = connect(t, base)
	c.resume(id, 1)
	c.readDispatch("INTERACTION_CREATE", 2)
	c.readDispatch("INTERACTION_CREATE", 3)
	c.readDispatch("RESUMED", 4)
}

func TestResumeUnknownSession(t *testing.T) {
	t.Parallel()
	base := serve(t, New(Config{Ready: testReady()}))
	c := connect(t, base)
	c.resume("no-such-session", 3)
	c.invalidSession(false)
}

func TestResumeWithAnotherTokenIsRefused(t *testing.T) {
	t.Parallel()
	g := New(Config{Ready: testReady()})
	base := serve(t, g)
	c := connect(t, base)
	id := c.identify()
	c.drop()
	waitSessions(t, g, 0)

	c = connect(t, base)
	c.op(opResume, map[string]any{"token": "someone-else", "session_id": id, "seq": 1})
	c.invalidSession(false)
}

func TestInvalidateSessionsResumable(t *testing.T) {
	t.Parallel()
	g := New(Config{Ready: testReady()})
	base := serve(t, g)
	c := connect(t, base)
	id := c.identify()

	g.InvalidateSessions(true)
	c.invalidSession(true)
	if n := g.Sessions(); n != 0 {
		t.Errorf("Sessions() = %d after INVALID_SESSION, want 0", n)
	}
	g.Dispatch("", "INTERACTION_CREATE", msg{1})
	c.resume(id, 1)
	c.readDispatch("INTERACTION_CREATE", 2)
	c.readDispatch("RESUMED", 3)
}

func TestReconnectSendsOp7AndKeepsSession(t *testing.T) {
	t.Parallel()
	g := New(Config{Ready: testReady()})
	base := serve(t, g)
	unidentified := connect(t, base)
	c := connect(t, base)
	id := c.identify()

	g.Reconnect()
	if p := c.read(); p.Op != opReconnect {
		t.Fatalf("got %v, want RECONNECT", p)
	}
	unidentified.op(opHeartbeat, nil)
	if p := unidentified.read(); p.Op != opHeartbeatAck {
		t.Fatalf("connection without session got %v, want only the HEARTBEAT_ACK", p)
	}
	c.drop()
	c = connect(t, base)
	c.resume(id, 1)
	c.readDispatch("RESUMED", 2)
}

func TestDisconnectKeepsSessionResumable(t *testing.T) {
	t.Parallel()
	for _, code := range []int{CloseUnknownError, CloseRateLimited, CloseSessionTimedOut, websocket.CloseAbnormalClosure} {
		t.Run(fmt.Sprint(code), func(t *testing.T) {
			t.Parallel()
			g := New(Config{Ready: testReady()})
			base := serve(t, g)
			c := connect(t, base)
			id := c.identify()

			g.Disconnect(code)
			c.expectClose(code)
			g.Dispatch("", "INTERACTION_CREATE", msg{1})
			c = connect(t, base)
			c.resume(id, 1)
			c.readDispatch("INTERACTION_CREATE", 2)
			c.readDispatch("RESUMED", 3)
		})
	}
}

// waitSessions waits until the gateway has noticed connections going away.
// The server learns of a dropped client asynchronously, and a test must not
// dispatch before then if it means "while disconnected".
func waitSessions(t *testing.T, g *Gateway, n int) {
	t.Helper()
	wait.WithinShowing(t, readTimeout, fmt.Sprintf("Sessions() = %d", n), func() bool { return g.Sessions() == n },
		func() string { return fmt.Sprintf("Sessions() = %d", g.Sessions()) })
}

// READY's resume_gateway_url is where a session resumes (Discord's gateway
// docs, "Ready event" and "Preparing to Resume": "your app should open a
// new connection using resume_gateway_url rather than the URL used to
// initially connect"). The simulator's is the endpoint below /resume.
func TestResumeOnResumeGatewayURL(t *testing.T) {
	t.Parallel()
	clock := clockwork.NewFakeClock()
	g := New(Config{Clock: clock, Ready: testReady()})
	base := serve(t, g)
	c := connect(t, base)
	c.op(opIdentify, identifyPayload(testToken, allIntents))
	var r struct {
		SessionID        string `json:"session_id"`
		ResumeGatewayURL string `json:"resume_gateway_url"`
	}
	if err := json.Unmarshal(c.readDispatch("READY", 1).D, &r); err != nil || r.ResumeGatewayURL != base+"/resume" {
		t.Fatalf("READY resume_gateway_url %q (%v), want %s/resume", r.ResumeGatewayURL, err, base)
	}
	c.drop()
	waitSessions(t, g, 0)
	c = connect(t, r.ResumeGatewayURL+"/") // discordgo adds a slash
	c.resume(r.SessionID, 1)
	c.readDispatch("RESUMED", 2)
	if st := g.Stats(); st.Resumes != 1 || st.ResumesElsewhere != 0 || st.Connections != 2 {
		t.Fatalf("stats %+v", st)
	}
	clock.Advance(DefaultHeartbeatInterval)
	if p := c.read(); p.Op != opHeartbeat {
		t.Fatalf("got %v, want only the heartbeat request a session on its resume URL gets", p)
	}
}

// A resume elsewhere than on resume_gateway_url works, but is counted and
// the session is soon asked to reconnect: "If your app doesn't use the
// resume_gateway_url when reconnecting, it will experience disconnects at
// a higher rate than normal" (gateway docs, "Preparing to Resume").
func TestResumeElsewhereIsCountedAndReconnectedSoon(t *testing.T) {
	t.Parallel()
	clock := clockwork.NewFakeClock()
	g := New(Config{Clock: clock, Ready: testReady()})
	base := serve(t, g)
	c := connect(t, base)
	id := c.identify()
	c.drop()
	waitSessions(t, g, 0)
	c = connect(t, base)
	c.resume(id, 1)
	c.readDispatch("RESUMED", 2)
	if st := g.Stats(); st.Resumes != 1 || st.ResumesElsewhere != 1 {
		t.Fatalf("stats %+v", st)
	}
	clock.Advance(DefaultHeartbeatInterval)
	for p := c.read(); p.Op != opReconnect; p = c.read() {
		if p.Op != opHeartbeat {
			t.Fatalf("got %v, want RECONNECT", p)
		}
	}
}

// The close codes Discord marks "do not reconnect" end the session: a
// RESUME of it afterwards gets INVALID_SESSION ("Gateway Close Event
// Codes" in Opcodes and Status Codes: 4004, 4010-4014 reconnect false).
func TestFatalCloseCodesEndTheSession(t *testing.T) {
	t.Parallel()
	for _, code := range []int{CloseAuthenticationFailed, CloseInvalidShard, CloseShardingRequired,
		CloseInvalidAPIVersion, CloseInvalidIntents, CloseDisallowedIntents} {
		t.Run(fmt.Sprint(code), func(t *testing.T) {
			t.Parallel()
			g := New(Config{Ready: testReady()})
			base := serve(t, g)
			c := connect(t, base)
			id := c.identify()
			g.Disconnect(code)
			c.expectClose(code)
			c = connect(t, base+"/resume")
			c.resume(id, 1)
			c.invalidSession(false)
		})
	}
}
