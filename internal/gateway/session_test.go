package gateway

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/discord/intents"
	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/discord/simtest"
	"github.com/herald-bot/herald/internal/discord/transport"
	"github.com/herald-bot/herald/internal/testsupport/clockwatch"
	"github.com/herald-bot/herald/internal/testsupport/logbuf"
	"github.com/herald-bot/herald/internal/testsupport/wait"
)

// options point a session at s through a transport engine of its own,
// logging to logs, on s's fake clock when it has one.
func options(t *testing.T, s *simtest.Sim, logs *logbuf.Buffer) (Options, *transport.Engine) {
	t.Helper()
	e := transport.New(transport.Config{ApplicationID: s.ApplicationID()})
	rt, err := transport.Rewrite(e.RoundTripper(), s.URL+"/api/v10")
	if err != nil {
		t.Fatal(err)
	}
	// A new application: no privileged intent.
	o := Options{Token: simtest.Token, Transport: rt, Intents: intents.For(0), OnInteraction: func(*discordgo.Interaction) {},
		Logger: slog.New(slog.NewTextHandler(logs, nil))}
	if s.Clock != nil {
		o.Clock = s.Clock
	}
	return o, e
}

func open(t *testing.T, o Options) *Session {
	t.Helper()
	gw, err := Open(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gw.Close() })
	return gw
}

// The session connects, reading GET /gateway/bot through the transport
// engine, becomes ready and sees its guilds; after a drop or Discord's
// RECONNECT it resumes on READY's resume_gateway_url, never identifying
// again. discordgo alone resumed on the URL it first connected to.
func TestSessionResumesOnResumeGatewayURL(t *testing.T) {
	t.Parallel()
	s := simtest.New(t)
	s.CreateGuild(sim.DefaultFixture())
	var logs logbuf.Buffer
	o, e := options(t, s, &logs)
	gw := open(t, o)
	wait.Until(t, "ready", func() bool { return gw.Ready() == nil && gw.Guilds() == 1 })
	var found bool
	for _, b := range e.Snapshot().Buckets {
		found = found || b.Route == "GET /gateway/bot"
	}
	if !found {
		t.Error("GET /gateway/bot did not go through the engine")
	}

	s.SetFault(sim.Fault{Gateway: "disconnect", CloseCode: 4000})
	wait.Until(t, "resumed", func() bool { return s.Gateway().Resumes == 1 && gw.Ready() == nil })
	s.SetFault(sim.Fault{Gateway: "reconnect"})
	wait.Until(t, "resumed again", func() bool { return s.Gateway().Resumes == 2 && gw.Ready() == nil })
	if st := s.Gateway(); st.ResumesElsewhere != 0 || st.Identifies != 1 {
		t.Errorf("gateway stats %+v, want both resumes on resume_gateway_url and one IDENTIFY", st)
	}
	if log := logs.String(); !strings.Contains(log, "gateway disconnected; reconnecting") || !strings.Contains(log, "gateway resumed") {
		t.Errorf("the drop and the resume were not logged:\n%s", log)
	}

	s.CreateGuild(sim.Fixture{Name: "second"})
	wait.Until(t, "second guild", func() bool { return gw.Guilds() == 2 })

	if err := gw.Close(); err != nil {
		t.Fatal(err)
	}
	if gw.Ready() == nil {
		t.Error("ready after Close")
	}
	wait.Until(t, "the session ended", func() bool { return s.GatewaySessions() == 0 })
	if strings.Contains(logs.String(), simtest.Token) {
		t.Error("the token reached the logs")
	}
}

// A close code Discord marks "do not reconnect" stops a running session:
// Err delivers a *FatalCloseError naming cause and fix, and herald never
// connects again (discordgo alone reconnected forever).
func TestFatalCloseStopsARunningSession(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		code int
		want string // in Reason and Fix
	}{
		{4004, "Reset Token"},
		{4010, "HERALD_SHARD_COUNT"},
		{4011, "HERALD_SHARD_COUNT"},
		{4012, "upgrade herald"},
		{4013, "herald bug"},
		{4014, "Developer Portal"},
	} {
		t.Run(fmt.Sprint(tt.code), func(t *testing.T) {
			t.Parallel()
			s := simtest.New(t)
			var logs logbuf.Buffer
			o, _ := options(t, s, &logs)
			gw := open(t, o)
			wait.Until(t, "ready", func() bool { return gw.Ready() == nil })

			s.SetFault(sim.Fault{Gateway: "disconnect", CloseCode: tt.code})
			var err error
			select {
			case err = <-gw.Err():
			case <-time.After(wait.Timeout):
				t.Fatal("no error on Err")
			}
			var fe *FatalCloseError
			if !errors.As(err, &fe) || fe.Code != tt.code || !strings.Contains(fe.Reason+" "+fe.Fix, tt.want) {
				t.Fatalf("Err = %#v, want a FatalCloseError %d mentioning %q", err, tt.code, tt.want)
			}
			// The supervisor is the only one that reconnects: once it has
			// returned, no reconnect can come, and one it made is counted.
			select {
			case <-gw.done:
			case <-time.After(wait.Timeout):
				t.Fatal("the supervisor still runs after a fatal close")
			}
			if st := s.Gateway(); st.Connections != 1 || st.Identifies != 1 || st.Resumes != 0 {
				t.Errorf("gateway stats %+v after a fatal close, want no reconnect", st)
			}
			if gw.Ready() == nil {
				t.Error("ready after a fatal close")
			}
			if !strings.Contains(logs.String(), "gateway stopped") {
				t.Errorf("the stop was not logged:\n%s", logs.String())
			}
		})
	}
}

// Identifying with a privileged intent the application has not enabled
// fails Open with 4014, naming the intent and the Developer Portal's
// toggle; nothing is retried.
func TestOpenWithDisallowedIntent(t *testing.T) {
	t.Parallel()
	s := simtest.New(t)
	o, _ := options(t, s, &logbuf.Buffer{})
	o.Intents |= intents.ServerMembers.Intent
	_, err := Open(t.Context(), o)
	var fe *FatalCloseError
	if !errors.As(err, &fe) || fe.Code != 4014 || !strings.Contains(fe.Reason, "Server Members Intent") ||
		!strings.Contains(fe.Fix, "Privileged Gateway Intents") {
		t.Fatalf("Open = %v, want a FatalCloseError 4014 naming Server Members Intent", err)
	}
	if st := s.Gateway(); st.Connections != 1 || st.Identifies != 1 {
		t.Errorf("gateway stats %+v, want one attempt", st)
	}
}

// A bad token is refused at Open, before any IDENTIFY: GET /gateway/bot
// answers 401, which is the 4004 the gateway would send.
func TestOpenWithBadToken(t *testing.T) {
	t.Parallel()
	s := simtest.New(t, simtest.WithOptions(sim.Options{Token: "the-right-token"}))
	o, _ := options(t, s, &logbuf.Buffer{})
	o.Token = "wrong"
	_, err := Open(t.Context(), o)
	var fe *FatalCloseError
	if !errors.As(err, &fe) || fe.Code != 4004 || !strings.Contains(fe.Fix, "DISCORD_TOKEN") {
		t.Fatalf("Open = %v, want a FatalCloseError 4004", err)
	}
	if st := s.Gateway(); st.Connections != 0 {
		t.Errorf("gateway stats %+v, want no connection", st)
	}
}

// After INVALID_SESSION herald waits a random 1 to 5 seconds (on its
// clock) before it identifies again — discordgo alone identified at once,
// on the same connection — or, when Discord says the session may resume,
// resumes it.
func TestInvalidSessionWaitsOneToFiveSeconds(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name      string
		random    float64
		wait      time.Duration
		resumable bool
	}{
		{"shortest", 0, time.Second, false},
		{"longest", 0.99999, 5*time.Second - 40*time.Microsecond, false},
		{"resumable", 0.5, 3 * time.Second, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := simtest.New(t, simtest.WithFakeClock())
			var logs logbuf.Buffer
			o, _ := options(t, s, &logs)
			clk := clockwatch.Watch(s.Clock)
			o.Clock = clk
			o.Random = func() float64 { return tt.random }
			gw := open(t, o)
			wait.Until(t, "ready", func() bool { return gw.Ready() == nil })
			clk.Advance(5 * time.Second) // past the identify window: only the wait counts

			s.SetFault(sim.Fault{Gateway: "invalidate_session", Resumable: tt.resumable})
			wait.Until(t, "the drop", func() bool { return strings.Contains(logs.String(), "gateway disconnected") })
			wait.Until(t, "herald to wait on its clock", func() bool { return clk.Pending() == 1 })
			// herald connects only when its wait's timer fires: a step
			// that fires none lets nothing happen.
			clk.Advance(tt.wait - time.Millisecond)
			if n := clk.Woken(); n != 0 {
				t.Fatalf("a step to %s woke herald: it would connect before the wait ended", tt.wait-time.Millisecond)
			}
			if st := s.Gateway(); st.Connections != 1 || st.Identifies != 1 {
				t.Fatalf("gateway stats %+v before the wait ended", st)
			}
			clk.Advance(time.Millisecond)
			wait.Until(t, "connected again", func() bool { return gw.Ready() == nil })
			st := s.Gateway()
			if tt.resumable && (st.Identifies != 1 || st.Resumes != 1 || st.ResumesElsewhere != 0) {
				t.Errorf("gateway stats %+v, want the session resumed on its resume URL", st)
			}
			if !tt.resumable && (st.Identifies != 2 || st.Resumes != 0 || st.Connections != 2) {
				t.Errorf("gateway stats %+v, want one new IDENTIFY on a new connection", st)
			}
		})
	}
}

// With no session start left, herald waits for the limit's reset_after,
// saying so once, and identifies only then: an IDENTIFY beyond the limit
// would end every session and reset the token.
func TestExhaustedStartLimitWaitsForReset(t *testing.T) {
	t.Parallel()
	s := simtest.New(t, simtest.WithFakeClock())
	zero, minute := 0, int64(60_000)
	s.SetSessionStartLimit(sim.StartLimitChange{Remaining: &zero, ResetAfter: &minute})
	var logs logbuf.Buffer
	o, _ := options(t, s, &logs)
	clk := clockwatch.Watch(s.Clock)
	o.Clock = clk
	opened := make(chan *Session, 1)
	go func() {
		gw, err := Open(t.Context(), o)
		if err != nil {
			t.Error(err)
		}
		opened <- gw
	}()
	wait.Until(t, "herald to wait on its clock", func() bool { return clk.Pending() == 1 })
	// herald connects only when its wait's timer fires: a step that fires
	// none lets nothing happen.
	clk.Advance(time.Minute - time.Millisecond)
	if n := clk.Woken(); n != 0 {
		t.Fatal("a step to a minute less a millisecond woke herald: it would connect before the reset")
	}
	if st := s.Gateway(); st.Connections != 0 || st.Identifies != 0 || st.TokenResets != 0 {
		t.Fatalf("gateway stats %+v before the reset", st)
	}
	clk.Advance(time.Millisecond)
	var gw *Session
	select {
	case gw = <-opened:
	case <-time.After(wait.Timeout):
		t.Fatal("Open did not return after the reset")
	}
	if gw == nil {
		return
	}
	t.Cleanup(func() { gw.Close() })
	if st := s.Gateway(); st.Identifies != 1 || st.SessionStartLimit.Remaining != 999 {
		t.Errorf("gateway stats %+v after the reset", st)
	}
	if n := strings.Count(logs.String(), "session start limit is used up"); n != 1 {
		t.Errorf("the wait was logged %d times, want once:\n%s", n, logs.String())
	}
}

// Shards of one process respect max_concurrency together: with 1, the
// second identifies 5 seconds after the first (discordgo alone identified
// at once and got INVALID_SESSION); with 2, both at once. Each shard sees
// its own guilds. A window set shorter (a simulator's, for tests that
// restart herald) is the pace instead.
func TestShardsIdentifyAtMaxConcurrencyPace(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		concurrency int
		window      time.Duration // zero: Discord's
	}{{1, 0}, {2, 0}, {1, simtest.IdentifyWindow}} {
		concurrency, window := c.concurrency, cmp.Or(c.window, identifyWindow)
		t.Run(fmt.Sprintf("max_concurrency %d, window %s", concurrency, window), func(t *testing.T) {
			t.Parallel()
			s := simtest.New(t, simtest.WithFakeClock())
			s.SetSessionStartLimit(sim.StartLimitChange{MaxConcurrency: &concurrency})
			if c.window > 0 {
				s.ShortIdentifyWindow()
			}
			const guilds = 6
			for i := range guilds {
				s.CreateGuild(sim.Fixture{Name: "g" + string(rune('a'+i))})
				s.Clock.Advance(3 * time.Millisecond) // spread the snowflakes' timestamps
			}
			var sessions [2]*Session
			// readied is how many guilds each shard's READY listed: the
			// simulator sends a GUILD_CREATE for each of those, and no
			// other, so a shard has seen all its guilds once it has seen
			// that many.
			var mu sync.Mutex
			readied := map[int]int{}
			pacer := NewPacer(s.Clock)
			for shard := range 2 {
				o, _ := options(t, s, &logbuf.Buffer{})
				o.ShardID, o.ShardCount, o.Pacer, o.IdentifyWindow = shard, 2, pacer, c.window
				o.Events = &Events{}
				o.Events.On(func(_ *discordgo.Session, r *discordgo.Ready) {
					mu.Lock()
					defer mu.Unlock()
					readied[shard] = len(r.Guilds)
				})
				if shard == 0 || concurrency == 2 {
					sessions[shard] = open(t, o)
					continue
				}
				opened := make(chan *Session, 1)
				go func() {
					gw, err := Open(t.Context(), o)
					if err != nil {
						t.Error(err)
					}
					opened <- gw
				}()
				// Shard 0's heartbeat watch in the simulator, shard 1's wait.
				if err := s.Clock.BlockUntilContext(t.Context(), 2); err != nil {
					t.Fatal(err)
				}
				if st := s.Gateway(); st.Identifies != 1 {
					t.Fatalf("gateway stats %+v: shard 1 identified within %s", st, window)
				}
				s.Clock.Advance(window)
				select {
				case sessions[shard] = <-opened:
				case <-time.After(wait.Timeout):
					t.Fatalf("shard 1 did not identify %s after shard 0", window)
				}
				if sessions[shard] == nil {
					return
				}
				t.Cleanup(func() { sessions[shard].Close() })
			}
			// Unsharded sessions would each be sent every guild.
			wait.Until(t, "every shard to see the guilds its READY listed", func() bool {
				mu.Lock()
				defer mu.Unlock()
				_, ready0 := readied[0]
				_, ready1 := readied[1]
				return ready0 && ready1 && sessions[0].Guilds() == readied[0] && sessions[1].Guilds() == readied[1]
			})
			if a, b := sessions[0].Guilds(), sessions[1].Guilds(); a+b != guilds {
				t.Errorf("shards saw %d and %d guilds, want %d between them", a, b, guilds)
			}
			if st := s.Gateway(); st.Identifies != 2 {
				t.Errorf("gateway stats %+v, want exactly two IDENTIFYs", st)
			}
		})
	}
}

// discordgo's REST methods are refused before they reach Discord: herald
// calls Discord only through internal/discord/rest.
func TestDiscordgoRESTIsRefused(t *testing.T) {
	t.Parallel()
	s := simtest.New(t)
	g := s.CreateGuild(sim.DefaultFixture())
	o, _ := options(t, s, &logbuf.Buffer{})
	gw := open(t, o)
	wait.Until(t, "ready", func() bool { return gw.Ready() == nil })
	before := len(s.Server.Requests())
	_, err := gw.Discord().ChannelMessageSend(g.Channel("general"), "bypass")
	if err == nil || !strings.Contains(err.Error(), "internal/discord/rest") {
		t.Fatalf("ChannelMessageSend = %v, want a refusal naming the REST client", err)
	}
	for _, r := range s.Server.Requests()[before:] {
		if r.Method == "POST" {
			t.Errorf("a refused call reached the simulator: %s %s", r.Method, r.Route)
		}
	}
}

// Recommended's answer serves the process's first IDENTIFY, so a start
// asks GET /gateway/bot once, not twice. Another session given the same
// answer asks again, and so does one whose answer leaves few starts.
func TestFirstIdentifyUsesRecommendedAnswer(t *testing.T) {
	t.Parallel()
	s := simtest.New(t)
	s.CreateGuild(sim.DefaultFixture())
	s.ShortIdentifyWindow()
	var logs logbuf.Buffer
	o, _ := options(t, s, &logs)
	// Paced wider than the simulator's window, which an IDENTIFY sent
	// a hair early would miss.
	o.IdentifyWindow, o.ShardCount, o.Pacer = 2*simtest.IdentifyWindow, 3, NewPacer(o.Clock)
	reads := func() int {
		n := 0
		for _, r := range s.Server.Requests() {
			if r.Method == "GET" && r.Route == "/gateway/bot" {
				n++
			}
		}
		return n
	}
	openWith := func(shard int, answer *Answer) {
		o := o
		o.ShardID, o.Answer = shard, answer
		gw := open(t, o)
		wait.Until(t, fmt.Sprintf("shard %d ready", shard), func() bool { return gw.Ready() == nil })
	}
	_, answer, err := Recommended(t.Context(), o.Token, o.Transport)
	if err != nil {
		t.Fatal(err)
	}
	openWith(0, answer)
	if n := reads(); n != 1 {
		t.Errorf("%d reads of GET /gateway/bot for the first session, want 1: Recommended's", n)
	}
	openWith(1, answer)
	if n := reads(); n != 2 {
		t.Errorf("%d reads after a second session on the same answer, want 2", n)
	}

	remaining := 2 // max_concurrency 1: too few to identify on without asking
	if err := s.Server.SetSessionStartLimit(sim.StartLimitChange{Remaining: &remaining}); err != nil {
		t.Fatal(err)
	}
	if _, answer, err = Recommended(t.Context(), o.Token, o.Transport); err != nil {
		t.Fatal(err)
	}
	openWith(2, answer)
	if n := reads(); n != 4 {
		t.Errorf("%d reads after a session on an answer with 2 starts left, want 4\n%s", n, logs.String())
	}
}
