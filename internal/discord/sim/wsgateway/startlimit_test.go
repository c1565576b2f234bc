package wsgateway

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
)

// The session start limit, as Discord's gateway docs give it: GET
// /gateway/bot's "Session Start Limit Object" (total, remaining,
// reset_after, max_concurrency), "Identifying" (an IDENTIFY beyond the
// limit terminates the app's sessions and resets its token; RESUMEs do
// not count) and "Rate Limiting" / "Sharding › Max Concurrency" (one
// identify per rate_limit_key = shard_id % max_concurrency every 5
// seconds, or INVALID_SESSION).

func limitedGateway(t *testing.T, clock clockwork.Clock, l StartLimit, reset func()) (*Gateway, string) {
	t.Helper()
	g := New(Config{Clock: clock, Ready: testReady(), SessionStarts: l, TokenReset: reset})
	return g, serve(t, g)
}

// sendIdentifyShard sends IDENTIFY for shard of count.
func (c *client) sendIdentifyShard(shard, count int) {
	c.t.Helper()
	d := identifyPayload(testToken, allIntents)
	d["shard"] = []int{shard, count}
	c.op(opIdentify, d)
}

func TestIdentifySpendsASessionStartAndResumeDoesNot(t *testing.T) {
	t.Parallel()
	clock := clockwork.NewFakeClock()
	g, base := limitedGateway(t, clock, StartLimit{Total: 10, Remaining: 10, MaxConcurrency: 1}, nil)
	c := connect(t, base)
	id := c.identify()
	if l := g.StartLimit(); l.Remaining != 9 || l.Total != 10 || l.ResetAfter != DefaultStartWindow || l.MaxConcurrency != 1 {
		t.Fatalf("after one IDENTIFY: %+v", l)
	}
	c.drop()
	waitSessions(t, g, 0)
	c = connect(t, base+resumePath)
	c.resume(id, 1)
	c.readDispatch("RESUMED", 2)
	clock.Advance(time.Hour)
	if l := g.StartLimit(); l.Remaining != 9 || l.ResetAfter != DefaultStartWindow-time.Hour {
		t.Fatalf("after a RESUME an hour later: %+v", l)
	}
	if st := g.Stats(); st.Identifies != 1 || st.Resumes != 1 {
		t.Fatalf("stats %+v", st)
	}
}

func TestStartLimitRefillsAfterResetAfter(t *testing.T) {
	t.Parallel()
	clock := clockwork.NewFakeClock()
	g, base := limitedGateway(t, clock, StartLimit{Total: 5, Remaining: 0, ResetAfter: time.Minute, MaxConcurrency: 1}, nil)
	if l := g.StartLimit(); l.Remaining != 0 || l.ResetAfter != time.Minute {
		t.Fatalf("before the reset: %+v", l)
	}
	clock.Advance(time.Minute)
	if l := g.StartLimit(); l.Remaining != 5 || l.ResetAfter != DefaultStartWindow {
		t.Fatalf("at reset_after: %+v", l)
	}
	connect(t, base).identify()
	if l := g.StartLimit(); l.Remaining != 4 {
		t.Fatalf("after the reset and one IDENTIFY: %+v", l)
	}
}

func TestIdentifyBeyondStartLimitTerminatesSessionsAndResetsToken(t *testing.T) {
	t.Parallel()
	clock := clockwork.NewFakeClock()
	var resets atomic.Int32
	g, base := limitedGateway(t, clock, StartLimit{Total: 2, Remaining: 1, ResetAfter: time.Hour, MaxConcurrency: 1},
		func() { resets.Add(1) })
	first := connect(t, base)
	id := first.identify()
	clock.Advance(DefaultIdentifyWindow)

	second := connect(t, base)
	second.op(opIdentify, identifyPayload(testToken, allIntents))
	second.expectClose(CloseAuthenticationFailed)
	first.expectClose(CloseAuthenticationFailed)
	if n := resets.Load(); n != 1 {
		t.Fatalf("TokenReset called %d times, want 1", n)
	}
	if st := g.Stats(); st.TokenResets != 1 || st.Sessions != 0 {
		t.Fatalf("stats %+v", st)
	}

	// The old token is dead, even once the limit has refilled.
	clock.Advance(time.Hour)
	c := connect(t, base)
	c.resume(id, 1)
	c.expectClose(CloseAuthenticationFailed)
	c = connect(t, base)
	c.op(opIdentify, identifyPayload(testToken, allIntents))
	c.expectClose(CloseAuthenticationFailed)
}

func TestIdentifiesPerRateLimitKeyEveryFiveSeconds(t *testing.T) {
	t.Parallel()
	clock := clockwork.NewFakeClock()
	g, base := limitedGateway(t, clock, StartLimit{Total: 10, Remaining: 10, MaxConcurrency: 2}, nil)
	for shard := range 2 { // keys 0 and 1: both start at once
		connect(t, base).identifyShard(shard, 4, allIntents)
	}
	c := connect(t, base)
	c.sendIdentifyShard(2, 4) // key 0 again, within 5 s
	c.invalidSession(false)
	if l := g.StartLimit(); l.Remaining != 8 {
		t.Fatalf("a refused IDENTIFY started a session: %+v", l)
	}
	clock.Advance(DefaultIdentifyWindow - time.Millisecond)
	c.sendIdentifyShard(2, 4)
	c.invalidSession(false)
	clock.Advance(time.Millisecond)
	c.sendIdentifyShard(2, 4) // the connection stayed open for it
	c.readDispatch("READY", 1)
	if st := g.Stats(); st.Identifies != 5 || st.Sessions != 3 {
		t.Fatalf("stats %+v", st)
	}
}

func TestSetStartLimitRejectsNonsense(t *testing.T) {
	t.Parallel()
	g := New(Config{Ready: testReady(), SessionStarts: StartLimit{Total: 10, Remaining: 10, MaxConcurrency: 1}})
	t.Cleanup(g.Close)
	for _, l := range []StartLimit{
		{Total: 0, MaxConcurrency: 1},
		{Total: 5, Remaining: 6, MaxConcurrency: 1},
		{Total: 5, Remaining: -1, MaxConcurrency: 1},
		{Total: 5, Remaining: 5, ResetAfter: -time.Second, MaxConcurrency: 1},
		{Total: 5, Remaining: 5},
	} {
		if err := g.SetStartLimit(l); err == nil {
			t.Errorf("SetStartLimit(%+v) accepted", l)
		}
	}
	if l := g.StartLimit(); l.Total != 10 || l.Remaining != 10 {
		t.Fatalf("a refused change changed the limit: %+v", l)
	}
}

// A test about something else may shorten the identify window; a key
// then identifies again once the shorter window has passed.
func TestSetIdentifyWindow(t *testing.T) {
	t.Parallel()
	clock := clockwork.NewFakeClock()
	g, base := limitedGateway(t, clock, StartLimit{Total: 10, Remaining: 10, MaxConcurrency: 1}, nil)
	if err := g.SetIdentifyWindow(0); err == nil {
		t.Fatal("a zero window accepted")
	}
	if err := g.SetIdentifyWindow(100 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	connect(t, base).identifyShard(0, 1, allIntents)
	c := connect(t, base)
	c.sendIdentifyShard(0, 1)
	c.invalidSession(false)
	clock.Advance(100 * time.Millisecond)
	c.sendIdentifyShard(0, 1)
	c.readDispatch("READY", 1)
}
