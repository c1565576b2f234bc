package gateway

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/herald-bot/herald/internal/discord/intents"
	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/discord/simtest"
	"github.com/herald-bot/herald/internal/testsupport/clockwatch"
	"github.com/herald-bot/herald/internal/testsupport/logbuf"
	"github.com/herald-bot/herald/internal/testsupport/wait"
)

func TestReplayAge(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	var r replay
	if a := r.age(at(0)); a != 0 {
		t.Fatalf("a new session's event is %s old, want live", a)
	}
	r.resuming(at(0), at(30*time.Second))
	if a := r.age(at(31 * time.Second)); a != 31*time.Second {
		t.Errorf("while resuming: %s, want 31s (since the last frame heard)", a)
	}
	// A RESUME that fails: the second attempt's connection heard HELLO
	// later, but the events missed date from the first loss.
	r.resuming(at(40*time.Second), at(41*time.Second))
	r.resumed(at(42 * time.Second))
	if a := r.age(at(42*time.Second + replayGrace - time.Millisecond)); a != 42*time.Second+replayGrace-time.Millisecond {
		t.Errorf("within the grace after RESUMED: %s, want from the first loss", a)
	}
	if a := r.age(at(42*time.Second + replayGrace)); a != 0 {
		t.Errorf("after the grace: %s, want live", a)
	}
	// A later loss starts from its own last frame.
	r.resuming(at(100*time.Second), at(101*time.Second))
	if a := r.age(at(102 * time.Second)); a != 2*time.Second {
		t.Errorf("second loss: %s, want 2s", a)
	}
	r.identifying()
	if a := r.age(at(103 * time.Second)); a != 0 {
		t.Errorf("after IDENTIFY: %s, want live", a)
	}
}

// With the Server Members intent a member's roles reach OnMember: live
// ones as new, and one Discord replays on RESUME as old as the time since
// herald last heard the lost connection, so that no one takes it for
// newer than it is.
func TestMemberUpdatesSayHowOldTheyMayBe(t *testing.T) {
	t.Parallel()
	s := simtest.New(t, simtest.WithFakeClock())
	s.SetApplicationFlags(sim.AppFlagGatewayGuildMembersLimited)
	g := s.CreateGuild(sim.DefaultFixture())
	var logs logbuf.Buffer
	o, _ := options(t, s, &logs)
	o.Intents = intents.For(sim.AppFlagGatewayGuildMembersLimited)
	clk := clockwatch.Watch(s.Clock)
	o.Clock = clk
	o.Random = func() float64 { return 0.5 } // a 3 s wait after INVALID_SESSION
	var mu sync.Mutex
	var got []Member
	o.Events = &Events{}
	o.Events.OnMember(func(m Member) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, m)
	})
	seen := func(n int) func() bool {
		return func() bool { mu.Lock(); defer mu.Unlock(); return len(got) == n }
	}
	gw := open(t, o)
	wait.Until(t, "ready", func() bool { return gw.Ready() == nil })
	member, role := g.Members[0].ID, g.Roles[1].ID

	s.SetMemberRole(g.ID, member, role, true)
	wait.Until(t, "the live update", seen(1))

	s.SetFault(sim.Fault{Gateway: "invalidate_session", Resumable: true})
	wait.Until(t, "herald to wait on its clock", func() bool { return clk.Pending() == 1 })
	s.SetMemberRole(g.ID, member, role, false) // sent while herald is away
	clk.Advance(3 * time.Second)
	wait.Until(t, "the replayed update", seen(2))
	wait.Until(t, "resumed", func() bool { return gw.Ready() == nil })
	if st := s.Gateway(); st.Resumes != 1 {
		t.Fatalf("gateway stats %+v: the update was not replayed on RESUME", st)
	}
	clk.Advance(replayGrace)
	s.SetMemberRole(g.ID, member, role, true)
	wait.Until(t, "the next live update", seen(3))

	mu.Lock()
	defer mu.Unlock()
	for i, want := range []struct {
		has bool
		age time.Duration
	}{{true, 0}, {false, 3 * time.Second}, {true, 0}} {
		m := got[i]
		if m.GuildID != g.ID || m.UserID != member || slices.Contains(m.Roles, role) != want.has || m.Age != want.age {
			t.Errorf("update %d: %+v, want the role %t and age %s", i+1, m, want.has, want.age)
		}
	}
	if !strings.Contains(logs.String(), "gateway resumed") {
		t.Errorf("no resume logged:\n%s", logs.String())
	}
}
