package wsgateway

import (
	"errors"
	"net"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/herald-bot/herald/internal/testsupport/wait"
)

// silence is how long a zombie connection is watched for a frame that
// must not come. A frame that does come fails the test whatever the
// machine's speed; a slow machine only makes the check weaker.
const silence = 200 * time.Millisecond

// A zombie connection answers nothing — no heartbeat ACK, no dispatch, no
// heartbeat timeout — while its session buffers what it misses. A client
// that drops it without closing resumes and gets every missed dispatch; a
// client that closes it with 1000 ends the session, as on a live one.
func TestZombieConnection(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		leave  func(*client)
		resume bool
	}{
		{name: "dropped", leave: func(c *client) { c.drop() }, resume: true},
		{name: "closed with 4000", leave: func(c *client) {
			_ = c.ws.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(4000, ""))
			c.drop()
		}, resume: true},
		{name: "closed with 1000", leave: func(c *client) {
			_ = c.ws.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""))
			c.drop()
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g, clock, c := fakeGateway(t)
			id := c.identify()
			waitTimer(t, clock)

			g.Zombie()
			if n := g.Sessions(); n != 0 {
				t.Errorf("Sessions() = %d with its connection a zombie, want 0", n)
			}
			g.Dispatch(guildOne, "GUILD_ROLE_UPDATE", msg{1})
			c.op(opHeartbeat, 1)
			clock.Advance(2 * testInterval) // no heartbeat request, no 4009
			_ = c.ws.SetReadDeadline(time.Now().Add(silence))
			_, got, err := c.ws.ReadMessage()
			var ne net.Error
			if !errors.As(err, &ne) || !ne.Timeout() {
				t.Fatalf("a zombie connection sent %s (%v), want nothing", got, err)
			}

			tt.leave(c)
			// The old connection's end is read before the new one resumes.
			wait.Until(t, "the zombie connection gone", func() bool {
				g.mu.Lock()
				defer g.mu.Unlock()
				return len(g.conns) == 0
			})
			c = connect(t, c.base)
			c.resume(id, 1)
			if !tt.resume {
				c.invalidSession(false)
				return
			}
			if p := c.readDispatch("GUILD_ROLE_UPDATE", 2); string(p.D) != `{"n":1}` {
				t.Errorf("replayed %s, want the dispatch the zombie missed", p.D)
			}
			c.readDispatch("RESUMED", 3)
		})
	}
}
