package wsgateway

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestHelloIdentifyReadyGuildCreate(t *testing.T) {
	t.Parallel()
	shards := make(chan [2]int, 1)
	ready := testReady(testGuild(1<<22), testGuild(2<<22))
	g := New(Config{
		HeartbeatInterval: 1234 * time.Millisecond,
		Ready: func(id, count int, presences bool) Ready {
			shards <- [2]int{id, count}
			return ready(id, count, presences)
		},
	})
	base := serve(t, g)
	c := dial(t, base+"?v=10&encoding=json")

	hello := c.read()
	if hello.Op != opHello || hello.S != nil || hello.T != nil {
		t.Fatalf("first payload %v, want HELLO with null s and t", hello)
	}
	var h helloData
	if err := json.Unmarshal(hello.D, &h); err != nil || h.HeartbeatInterval != 1234 {
		t.Fatalf("HELLO d = %s, want heartbeat_interval 1234", hello.D)
	}

	c.op(opIdentify, identifyPayload("Bot "+testToken, allIntents))
	p := c.readDispatch("READY", 1)
	var r struct {
		V                int              `json:"v"`
		User             map[string]any   `json:"user"`
		Guilds           []map[string]any `json:"guilds"`
		SessionID        string           `json:"session_id"`
		ResumeGatewayURL string           `json:"resume_gateway_url"`
		Shard            *[2]int          `json:"shard"`
		Application      map[string]any   `json:"application"`
	}
	if err := json.Unmarshal(p.D, &r); err != nil {
		t.Fatalf("READY %s: %v", p.D, err)
	}
	if r.V != 10 || r.User["id"] != "100" || r.Application["id"] != "200" || r.SessionID == "" {
		t.Errorf("READY = %s", p.D)
	}
	if r.ResumeGatewayURL != base+"/resume" {
		t.Errorf("resume_gateway_url = %q, want %q", r.ResumeGatewayURL, base+"/resume")
	}
	if r.Shard != nil {
		t.Errorf("READY has shard %v although IDENTIFY sent none", *r.Shard)
	}
	wantStubs := []map[string]any{{"id": "4194304", "unavailable": true}, {"id": "8388608", "unavailable": true}}
	if !reflect.DeepEqual(r.Guilds, wantStubs) {
		t.Errorf("READY guilds = %v, want unavailable stubs %v", r.Guilds, wantStubs)
	}
	if got := <-shards; got != [2]int{0, 1} {
		t.Errorf("Ready called for shard %v, want [0 1]", got)
	}
	for i, want := range []string{"4194304", "8388608"} {
		gc := c.readDispatch("GUILD_CREATE", int64(i+2))
		var guild map[string]any
		if err := json.Unmarshal(gc.D, &guild); err != nil || guild["id"] != want || guild["name"] == nil {
			t.Errorf("GUILD_CREATE %d = %s, want the full guild %s", i, gc.D, want)
		}
	}
	if n := g.Sessions(); n != 1 {
		t.Errorf("Sessions() = %d, want 1", n)
	}
}

func TestReadyEchoesShardAndVersion(t *testing.T) {
	t.Parallel()
	shards := make(chan [2]int, 1)
	g := New(Config{Ready: func(id, count int, presences bool) Ready {
		shards <- [2]int{id, count}
		return testReady()(id, count, presences)
	}})
	base := serve(t, g)
	c := dial(t, base+"/?v=9")
	c.read()
	d := identifyPayload(testToken, 1)
	d["shard"] = []int{2, 3}
	c.op(opIdentify, d)
	p := c.readDispatch("READY", 1)
	var r struct {
		V     int     `json:"v"`
		Shard *[2]int `json:"shard"`
	}
	if err := json.Unmarshal(p.D, &r); err != nil {
		t.Fatal(err)
	}
	if got := <-shards; r.V != 9 || r.Shard == nil || *r.Shard != [2]int{2, 3} || got != [2]int{2, 3} {
		t.Errorf("READY v=%d shard=%v, Ready called with %v; want v 9 and shard [2 3]", r.V, r.Shard, got)
	}
}

func TestHeartbeatAck(t *testing.T) {
	t.Parallel()
	base := serve(t, New(Config{Ready: testReady()}))
	c := connect(t, base)

	// Heartbeats are allowed before IDENTIFY, with a null sequence.
	c.op(opHeartbeat, nil)
	if p := c.read(); p.Op != opHeartbeatAck || p.S != nil || p.T != nil {
		t.Fatalf("got %v, want HEARTBEAT_ACK", p)
	}
	c.identify()
	c.op(opHeartbeat, 1)
	if p := c.read(); p.Op != opHeartbeatAck {
		t.Fatalf("got %v, want HEARTBEAT_ACK", p)
	}
}

func TestIgnoredCommandsAreAccepted(t *testing.T) {
	t.Parallel()
	base := serve(t, New(Config{Ready: testReady()}))
	c := connect(t, base)
	c.identify()
	c.op(opPresenceUpdate, map[string]any{"since": nil, "activities": []any{}, "status": "online", "afk": false})
	c.op(opRequestMembers, map[string]any{"guild_id": "1", "query": "", "limit": 0})
	c.op(opHeartbeat, 1)
	if p := c.read(); p.Op != opHeartbeatAck {
		t.Fatalf("got %v, want HEARTBEAT_ACK after accepted commands", p)
	}
}

func TestResumeURLUsesRequestPath(t *testing.T) {
	t.Parallel()
	base := serve(t, New(Config{Ready: testReady()}))
	c := dial(t, base+"/?v=10&encoding=json")
	c.read()
	c.op(opIdentify, identifyPayload(testToken, 1))
	p := c.readDispatch("READY", 1)
	if !strings.Contains(string(p.D), `"resume_gateway_url":"`+base+`/resume"`) {
		t.Errorf("READY %s: resume_gateway_url is not %s/resume", p.D, base)
	}
}
