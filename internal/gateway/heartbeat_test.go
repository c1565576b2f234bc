package gateway

import (
	"strings"
	"testing"
	"time"

	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/discord/simtest"
	"github.com/herald-bot/herald/internal/testsupport/logbuf"
	"github.com/herald-bot/herald/internal/testsupport/wait"
)

// A connection that goes silent without closing is dropped at the first
// heartbeat that finds the one before it unanswered, without a close
// frame, and the session resumes: the guild that arrived while it was
// silent is replayed. discordgo alone waited five intervals and closed
// with 1000, which ends the session: the RESUME was refused, herald
// identified again and the guild's GUILD_CREATE was never seen.
func TestZombiedConnectionResumes(t *testing.T) {
	t.Parallel()
	// discordgo heartbeats on the wall clock, at the interval HELLO gives;
	// the simulator's clock is fake, so it never times the client out, and
	// its send limit (120 a minute, on that clock) lasts 30 s of these.
	const interval = 250 * time.Millisecond
	s := simtest.New(t, simtest.WithFakeClock(), simtest.WithOptions(sim.Options{HeartbeatInterval: interval}))
	s.CreateGuild(sim.DefaultFixture())
	var logs logbuf.Buffer
	o, _ := options(t, s, &logs)
	gw := open(t, o)
	wait.Until(t, "ready", func() bool { return gw.Ready() == nil && gw.Guilds() == 1 })

	s.SetFault(sim.Fault{Gateway: "zombie"})
	silent := time.Now()
	s.CreateGuild(sim.Fixture{Name: "second"})
	// At least once: on a starved machine an ACK may also come late.
	wait.Until(t, "resumed", func() bool { return s.Gateway().Resumes >= 1 && gw.Ready() == nil })
	t.Logf("resumed %s after the connection went silent (heartbeat interval %s)", time.Since(silent).Round(time.Millisecond), interval)
	wait.Until(t, "the guild sent while silent", func() bool { return gw.Guilds() == 2 })
	if st := s.Gateway(); st.Identifies != 1 {
		t.Errorf("gateway stats %+v, want one IDENTIFY: the session should have been resumed", st)
	}
	if log := logs.String(); !strings.Contains(log, "zombie=true") {
		t.Errorf("the zombied connection was not logged:\n%s", log)
	}
}

func TestIsHeartbeat(t *testing.T) {
	t.Parallel()
	frame := func(b0 byte, payload string) []byte {
		key := [4]byte{1, 2, 3, 4}
		p := []byte{b0, 0x80 | byte(len(payload)), key[0], key[1], key[2], key[3]}
		for i := range len(payload) {
			p = append(p, payload[i]^key[i%4])
		}
		return p
	}
	for _, tc := range []struct {
		frame []byte
		want  bool
	}{
		{frame(0x81, `{"op":1,"d":42}`), true},
		{frame(0x81, `{"op":1,"d":null}`), true},
		{frame(0x81, `{"op":2,"d":{}}`), false},
		{frame(0x81, `{"op":10}`), false},
		{frame(0x82, `{"op":1,"d":42}`), false},              // binary
		{frame(0x01, `{"op":1,"d":42}`), false},              // not final
		{frame(0x81, `{"op":1,"d":42}`)[:10], false},         // cut
		{append(frame(0x81, `{"op":1}`), 0x81, 0x80), false}, // more than one frame
		{[]byte("GET /gateway HTTP/1.1\r\n"), false},
	} {
		if got := isHeartbeat(tc.frame); got != tc.want {
			t.Errorf("isHeartbeat(% x) = %v, want %v", tc.frame, got, tc.want)
		}
	}
}
