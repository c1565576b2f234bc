package wsgateway

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/gorilla/websocket"
)

func TestProtocolErrorsClose(t *testing.T) {
	t.Parallel()
	identifyWith := func(change func(map[string]any)) func(*client) {
		return func(c *client) {
			d := identifyPayload(testToken, allIntents)
			change(d)
			c.op(opIdentify, d)
		}
	}
	tests := []struct {
		name   string
		cfg    Config
		query  string // replaces ?v=10&encoding=json when set
		action func(*client)
		code   int
	}{
		{name: "unknown opcode", action: func(c *client) { c.op(99, map[string]any{}) }, code: CloseUnknownOpcode},
		{name: "dispatch opcode from client", action: func(c *client) { c.op(opDispatch, map[string]any{}) }, code: CloseUnknownOpcode},
		{name: "invalid json", action: func(c *client) { c.sendRaw(websocket.TextMessage, []byte(`{"op":`)) }, code: CloseDecodeError},
		{name: "missing op", action: func(c *client) { c.sendRaw(websocket.TextMessage, []byte(`{"d":null}`)) }, code: CloseDecodeError},
		{name: "binary frame", action: func(c *client) { c.sendRaw(websocket.BinaryMessage, []byte(`{"op":1,"d":null}`)) }, code: CloseDecodeError},
		{name: "payload over 4096 bytes", action: func(c *client) {
			c.sendRaw(websocket.TextMessage, []byte(`{"op":1,"d":null,"pad":"`+strings.Repeat("x", 4096)+`"}`))
		}, code: CloseDecodeError},
		{name: "payload of a megabyte", action: func(c *client) {
			c.sendRaw(websocket.TextMessage, []byte(`{"op":1,"d":null,"pad":"`+strings.Repeat("x", 1<<20)+`"}`))
		}, code: CloseDecodeError},
		{name: "heartbeat with non-integer seq", action: func(c *client) { c.op(opHeartbeat, "seven") }, code: CloseDecodeError},
		{name: "identify without token", action: identifyWith(func(d map[string]any) { delete(d, "token") }), code: CloseDecodeError},
		{name: "identify with numeric token", action: identifyWith(func(d map[string]any) { d["token"] = 5 }), code: CloseDecodeError},
		{name: "identify without properties", action: identifyWith(func(d map[string]any) { delete(d, "properties") }), code: CloseDecodeError},
		{name: "identify with string intents", action: identifyWith(func(d map[string]any) { d["intents"] = "513" }), code: CloseDecodeError},
		{name: "identify d not an object", action: func(c *client) { c.op(opIdentify, "token") }, code: CloseDecodeError},
		{name: "resume without session id", action: func(c *client) {
			c.op(opResume, map[string]any{"token": testToken, "seq": 1})
		}, code: CloseDecodeError},
		{name: "presence before identify", action: func(c *client) {
			c.op(opPresenceUpdate, map[string]any{"status": "online", "activities": []any{}, "afk": false, "since": nil})
		}, code: CloseNotAuthenticated},
		{name: "request members before identify", action: func(c *client) {
			c.op(opRequestMembers, map[string]any{"guild_id": "1", "limit": 0})
		}, code: CloseNotAuthenticated},
		{name: "rejected token", cfg: Config{Authorize: func(tok string) bool { return tok == "other" }},
			action: func(c *client) { c.op(opIdentify, identifyPayload(testToken, 1)) }, code: CloseAuthenticationFailed},
		{name: "rejected token on resume", cfg: Config{Authorize: func(tok string) bool { return tok == "other" }},
			action: func(c *client) { c.resume("abc", 0) }, code: CloseAuthenticationFailed},
		{name: "identify twice", action: func(c *client) {
			c.identify()
			c.op(opIdentify, identifyPayload(testToken, 1))
		}, code: CloseAlreadyAuthenticated},
		{name: "resume after identify", action: func(c *client) {
			id := c.identify()
			c.resume(id, 1)
		}, code: CloseAlreadyAuthenticated},
		{name: "resume with seq beyond the session's", action: func(c *client) {
			id := c.identify()
			c.drop()
			*c = *connect(c.t, c.base)
			c.resume(id, 5)
		}, code: CloseInvalidSeq},
		{name: "shard id out of range", action: identifyWith(func(d map[string]any) { d["shard"] = []int{1, 1} }), code: CloseInvalidShard},
		{name: "negative shard id", action: identifyWith(func(d map[string]any) { d["shard"] = []int{-1, 2} }), code: CloseInvalidShard},
		{name: "shard of one element", action: identifyWith(func(d map[string]any) { d["shard"] = []int{0} }), code: CloseInvalidShard},
		{name: "zero shards", action: identifyWith(func(d map[string]any) { d["shard"] = []int{0, 0} }), code: CloseInvalidShard},
		{name: "too many guilds for one shard", cfg: Config{Ready: func(int, int, bool) Ready {
			guilds := make([]json.RawMessage, maxGuildsPerShard+1)
			for i := range guilds {
				guilds[i] = testGuild(uint64(i+1) << 22)
			}
			return Ready{Guilds: guilds}
		}}, action: identifyWith(func(map[string]any) {}), code: CloseShardingRequired},
		{name: "api version 8", query: "?v=8&encoding=json", code: CloseInvalidAPIVersion},
		{name: "no api version", query: "?encoding=json", code: CloseInvalidAPIVersion},
		{name: "undefined intent bit", action: identifyWith(func(d map[string]any) { d["intents"] = 1 << 18 }), code: CloseInvalidIntents},
		{name: "negative intents", action: identifyWith(func(d map[string]any) { d["intents"] = -1 }), code: CloseInvalidIntents},
		{name: "missing intents", action: identifyWith(func(d map[string]any) { delete(d, "intents") }), code: CloseInvalidIntents},
		{name: "privileged intent not enabled", cfg: Config{DisallowedIntents: func() int64 { return intentGuildMembers | intentGuildPresences }},
			action: identifyWith(func(d map[string]any) { d["intents"] = intentGuilds | intentGuildMembers }), code: CloseDisallowedIntents},
		{name: "etf encoding", query: "?v=10&encoding=etf", code: websocket.CloseUnsupportedData},
		{name: "unknown transport compression", query: "?v=10&encoding=json&compress=deflate", code: websocket.CloseUnsupportedData},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := tt.cfg
			if cfg.Ready == nil {
				cfg.Ready = testReady(testGuild(1 << 22))
			}
			base := serve(t, New(cfg))
			if tt.query != "" {
				c := dial(t, base+tt.query)
				c.expectClose(tt.code)
				return
			}
			c := connect(t, base)
			tt.action(c)
			c.expectClose(tt.code)
		})
	}
}
