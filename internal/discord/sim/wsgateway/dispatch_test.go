package wsgateway

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/gorilla/websocket"
)

// identifyShard identifies as shard id of count and reads READY.
func (c *client) identifyShard(id, count int, intents int64) {
	c.t.Helper()
	d := identifyPayload(testToken, intents)
	d["shard"] = []int{id, count}
	c.op(opIdentify, d)
	c.readDispatch("READY", 1)
}

func TestDispatchRoutesByShard(t *testing.T) {
	t.Parallel()
	g := New(Config{Ready: testReady()})
	base := serve(t, g)
	shards := make([]*client, 3)
	for i := range shards {
		shards[i] = connect(t, base)
		shards[i].identifyShard(i, 3, allIntents)
	}
	if n := g.Sessions(); n != 3 {
		t.Fatalf("Sessions() = %d, want 3", n)
	}

	// Each shard gets exactly the events of its own guilds, numbered on its
	// own sequence; the guild-less one goes to shard 0 only ("Gateway
	// events that do not contain a guild_id will only be sent to the first
	// shard").
	for n := range uint64(2) {
		for shard := range 3 {
			guild := guildOnShard(shard, 3, n+5)
			g.Dispatch(fmt.Sprint(guild), "GUILD_ROLE_UPDATE", map[string]string{"guild_id": fmt.Sprint(guild)})
		}
	}
	g.Dispatch("", "INTERACTION_CREATE", msg{7})
	for shard := range 3 {
		g.Dispatch(fmt.Sprint(guildOnShard(shard, 3, 9)), "GUILD_ROLE_DELETE", msg{8})
	}
	for shard, c := range shards {
		for n := range uint64(2) {
			p := c.readDispatch("GUILD_ROLE_UPDATE", int64(2+n))
			want := fmt.Sprintf(`{"guild_id":"%d"}`, guildOnShard(shard, 3, n+5))
			if string(p.D) != want {
				t.Errorf("shard %d got %s, want %s", shard, p.D, want)
			}
		}
		seq := int64(4)
		if shard == 0 {
			c.readDispatch("INTERACTION_CREATE", seq)
			seq++
		}
		c.readDispatch("GUILD_ROLE_DELETE", seq)
	}
}

func TestDispatchHonoursIntents(t *testing.T) {
	t.Parallel()
	g := New(Config{Ready: testReady()})
	base := serve(t, g)
	c := connect(t, base)
	c.op(opIdentify, identifyPayload(testToken, intentGuilds|intentDirectMessages))
	c.readDispatch("READY", 1)

	g.Dispatch(guildOne, "MESSAGE_DELETE", msg{1})      // needs GUILD_MESSAGES
	g.Dispatch(guildOne, "GUILD_MEMBER_REMOVE", msg{2}) // needs GUILD_MEMBERS
	g.Dispatch(guildOne, "CHANNEL_DELETE", msg{3})      // GUILDS
	g.Dispatch("", "MESSAGE_CREATE", msg{4})            // a DM: DIRECT_MESSAGES
	g.Dispatch(guildOne, "INTERACTION_CREATE", msg{5})  // needs no intent
	for i, want := range []struct {
		typ string
		n   int
	}{{"CHANNEL_DELETE", 3}, {"MESSAGE_CREATE", 4}, {"INTERACTION_CREATE", 5}} {
		p := c.readDispatch(want.typ, int64(2+i))
		if string(p.D) != fmt.Sprintf(`{"n":%d}`, want.n) {
			t.Errorf("got %s, want n=%d", p.D, want.n)
		}
	}
}

func TestRequiredIntents(t *testing.T) {
	t.Parallel()
	tests := []struct {
		event   string
		inGuild bool
		want    int64
	}{
		{"MESSAGE_CREATE", true, intentGuildMessages},
		{"MESSAGE_CREATE", false, intentDirectMessages},
		{"MESSAGE_REACTION_ADD", false, intentDirectMessageReactions},
		{"GUILD_ROLE_DELETE", true, intentGuilds},
		{"THREAD_DELETE", true, intentGuilds},
		{"GUILD_MEMBER_REMOVE", true, intentGuildMembers},
		{"GUILD_MEMBER_UPDATE", true, intentGuildMembers},
		{"THREAD_MEMBERS_UPDATE", true, intentGuildMembers},
		{"INTERACTION_CREATE", true, 0},
		{"AUTO_MODERATION_ACTION_EXECUTION", true, intentAutoModExecution},
	}
	for _, tt := range tests {
		if got := requiredIntents(tt.event, tt.inGuild); got != tt.want {
			t.Errorf("requiredIntents(%s, %v) = %b, want %b", tt.event, tt.inGuild, got, tt.want)
		}
	}
}

func TestDispatchDropsInvalidInput(t *testing.T) {
	t.Parallel()
	g := New(Config{Ready: testReady()})
	c := connect(t, serve(t, g))
	c.identify()
	g.Dispatch("not-a-snowflake", "GUILD_ROLE_UPDATE", msg{1})
	g.Dispatch(guildOne, "GUILD_ROLE_UPDATE", func() {}) // not encodable
	g.Dispatch(guildOne, "GUILD_ROLE_UPDATE", json.RawMessage(`{"n":2}`))
	c.readDispatch("GUILD_ROLE_UPDATE", 2)
}

func TestCloseEndsEverything(t *testing.T) {
	t.Parallel()
	g := New(Config{Ready: testReady()})
	base := serve(t, g)
	c := connect(t, base)
	c.identify()
	g.Close()
	c.expectClose(websocket.CloseGoingAway)
	if n := g.Sessions(); n != 0 {
		t.Errorf("Sessions() = %d after Close, want 0", n)
	}
	_, resp, err := websocket.DefaultDialer.Dial(base+"?v=10", nil)
	if err == nil || resp == nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("dial after Close: err %v, response %v; want 503", err, resp)
	}
}

func TestSecretsStayOutOfLogs(t *testing.T) {
	t.Parallel()
	var logs strings.Builder
	g := New(Config{Ready: testReady(), Logger: newTestLogger(&logs),
		Authorize: func(tok string) bool { return tok == testToken }})
	base := serve(t, g)
	c := connect(t, base)
	c.identify()
	bad := connect(t, base)
	bad.op(opIdentify, identifyPayload("wrong-secret", 1))
	bad.expectClose(CloseAuthenticationFailed)
	g.Disconnect(CloseUnknownError)
	c.expectClose(CloseUnknownError)
	g.Close()
	out := logs.String()
	if !strings.Contains(out, "4004") {
		t.Errorf("logs lack the 4004 close:\n%s", out)
	}
	for _, secret := range []string{testToken, "wrong-secret"} {
		if strings.Contains(out, secret) {
			t.Errorf("logs contain token %q:\n%s", secret, out)
		}
	}
}

func TestDispatchMessageBlanksContentWithoutIntent(t *testing.T) {
	t.Parallel()
	g := New(Config{Ready: testReady()})
	base := serve(t, g)
	with := connect(t, base)
	with.op(opIdentify, identifyPayload(testToken, intentGuildMessages|intentMessageContent))
	with.readDispatch("READY", 1)
	without := connect(t, base)
	without.op(opIdentify, identifyPayload(testToken, intentGuildMessages))
	without.readDispatch("READY", 1)

	g.DispatchMessage(guildOne, "MESSAGE_CREATE", map[string]string{"content": "secret"}, map[string]string{"content": ""})
	g.DispatchMessage(guildOne, "MESSAGE_CREATE", map[string]string{"content": "<@100> hi"}, nil)
	for _, tc := range []struct {
		c     *client
		first string
	}{{with, `{"content":"secret"}`}, {without, `{"content":""}`}} {
		if p := tc.c.readDispatch("MESSAGE_CREATE", 2); string(p.D) != tc.first {
			t.Errorf("got %s, want %s", p.D, tc.first)
		}
		if p := tc.c.readDispatch("MESSAGE_CREATE", 3); string(p.D) != `{"content":"\u003c@100\u003e hi"}` {
			t.Errorf("unblanked message: got %s", p.D)
		}
	}
}

// "Guild Member Update is sent for current-user updates regardless of
// whether the GUILD_MEMBERS intent is set" (Gateway, List of Intents):
// without the intent a session gets its bot's own member updates only.
func TestMemberUpdatesNeedTheIntentExceptTheBotsOwn(t *testing.T) {
	t.Parallel()
	g := New(Config{Ready: testReady()})
	base := serve(t, g)
	with := connect(t, base)
	with.op(opIdentify, identifyPayload(testToken, intentGuilds|intentGuildMembers))
	with.readDispatch("READY", 1)
	without := connect(t, base)
	without.op(opIdentify, identifyPayload(testToken, intentGuilds))
	without.readDispatch("READY", 1)

	other := map[string]any{"guild_id": "1", "user": map[string]string{"id": "200"}, "roles": []string{}}
	own := map[string]any{"guild_id": "1", "user": map[string]string{"id": "100"}, "roles": []string{"5"}}
	g.Dispatch(guildOne, "GUILD_MEMBER_UPDATE", other)
	g.Dispatch(guildOne, "GUILD_MEMBER_UPDATE", own)
	g.Dispatch(guildOne, "CHANNEL_DELETE", msg{1})
	if p := with.readDispatch("GUILD_MEMBER_UPDATE", 2); !strings.Contains(string(p.D), `"200"`) {
		t.Errorf("with the intent, first update: %s, want member 200's", p.D)
	}
	if p := with.readDispatch("GUILD_MEMBER_UPDATE", 3); !strings.Contains(string(p.D), `"100"`) {
		t.Errorf("with the intent, second update: %s, want the bot's", p.D)
	}
	if p := without.readDispatch("GUILD_MEMBER_UPDATE", 2); !strings.Contains(string(p.D), `"100"`) {
		t.Errorf("without the intent: %s, want the bot's own update only", p.D)
	}
	without.readDispatch("CHANNEL_DELETE", 3)
}

// "If the current user does not have the GUILD_MEMBERS Gateway Intent,
// then this event will only be sent if the current user was added to or
// removed from the thread" (Thread Members Update), to a session with
// GUILDS; one with neither hears of no thread's members.
func TestThreadMembersUpdateWithoutTheMembersIntent(t *testing.T) {
	t.Parallel()
	g := New(Config{Ready: testReady()})
	base := serve(t, g)
	session := func(intents int64) *client {
		c := connect(t, base)
		c.op(opIdentify, identifyPayload(testToken, intents))
		c.readDispatch("READY", 1)
		return c
	}
	members := session(intentGuilds | intentGuildMembers | intentGuildMessages)
	guilds := session(intentGuilds | intentGuildMessages)
	neither := session(intentGuildMessages)

	g.Dispatch(guildOne, "THREAD_MEMBERS_UPDATE", map[string]any{"id": "7", "added_members": []any{map[string]string{"user_id": "200"}}})
	g.Dispatch(guildOne, "THREAD_MEMBERS_UPDATE", map[string]any{"id": "7", "added_members": []any{map[string]string{"user_id": "100"}}})
	g.Dispatch(guildOne, "THREAD_MEMBERS_UPDATE", map[string]any{"id": "7", "removed_member_ids": []string{"100"}})
	g.Dispatch(guildOne, "MESSAGE_DELETE", msg{1})
	for i := range 3 {
		members.readDispatch("THREAD_MEMBERS_UPDATE", int64(2+i))
	}
	members.readDispatch("MESSAGE_DELETE", 5)
	if p := guilds.readDispatch("THREAD_MEMBERS_UPDATE", 2); !strings.Contains(string(p.D), `"100"`) {
		t.Errorf("with GUILDS only: %s, want the bot's own addition", p.D)
	}
	if p := guilds.readDispatch("THREAD_MEMBERS_UPDATE", 3); !strings.Contains(string(p.D), `"removed_member_ids":["100"]`) {
		t.Errorf("with GUILDS only: %s, want the bot's own removal", p.D)
	}
	guilds.readDispatch("MESSAGE_DELETE", 4)
	neither.readDispatch("MESSAGE_DELETE", 2)
}

// GUILD_CREATE is a GUILDS event, the ones after READY too: a session
// without the intent hears of its guilds from READY alone.
func TestGuildCreateAfterReadyNeedsGuilds(t *testing.T) {
	t.Parallel()
	g := New(Config{Ready: testReady(testGuild(1 << 22))})
	base := serve(t, g)
	c := connect(t, base)
	c.op(opIdentify, identifyPayload(testToken, intentGuildMessages))
	c.readDispatch("READY", 1)
	g.Dispatch(guildOne, "MESSAGE_DELETE", msg{1})
	c.readDispatch("MESSAGE_DELETE", 2)
}
