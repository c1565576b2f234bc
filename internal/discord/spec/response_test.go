package spec

import (
	"net/http"
	"strings"
	"testing"
)

const (
	botUser = `{"id":"1700000000000000001","username":"herald","discriminator":"0","avatar":null,"global_name":null,` +
		`"public_flags":0,"flags":0,"primary_guild":null,"bot":true}`
	message = `{"id":"1800000000000000001","channel_id":"1100000000000000001","type":0,"content":"Pick your roles",` +
		`"author":` + botUser + `,"mentions":[],"mention_roles":[],"attachments":[],"embeds":[],` +
		`"timestamp":"2026-11-29T22:00:00.000000+00:00","edited_timestamp":null,"flags":0,` +
		`"components":[{"type":1,"id":1,"components":[{"type":2,"id":2,"style":1,"label":"Red","custom_id":"/pick/7/1"}]}],` +
		`"pinned":false,"mention_everyone":false,"tts":false,"nonce":"rolemenu-7-rev3"}`
	channel = `{"id":"1100000000000000002","type":0,"name":"ticket-0012","guild_id":"1000000000000000001","position":3,` +
		`"flags":0,"parent_id":"1100000000000000009","topic":"Opened by alice","nsfw":false,"last_message_id":null,` +
		`"rate_limit_per_user":0,"permission_overwrites":[{"id":"1200000000000000001","type":1,"allow":"3072","deny":"0"}]}`
	command = `{"id":"1900000000000000001","application_id":"1600000000000000001","version":"1900000000000000002",` +
		`"default_member_permissions":null,"type":1,"name":"ticket","description":"Open a support ticket",` +
		`"name_localizations":{"de":"ticket"},"description_localizations":{"de":"Ticket öffnen"},"dm_permission":true,"nsfw":false}`
	rateLimited = `{"code":0,"message":"You are being rate limited.","retry_after":1.337,"global":false}`
)

// bucket returns the five bucket headers Discord sends on a response.
func bucket(remaining string) http.Header {
	return http.Header{
		"Content-Type":            {"application/json"},
		"X-Ratelimit-Limit":       {"5"},
		"X-Ratelimit-Remaining":   {remaining},
		"X-Ratelimit-Reset":       {"1764453601.337"},
		"X-Ratelimit-Reset-After": {"1.337"},
		"X-Ratelimit-Bucket":      {"80c17d2f203122d936070c88c8d10f33"},
	}
}

func with(h http.Header, kv ...string) http.Header {
	h = h.Clone()
	for i := 0; i+1 < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	return h
}

func without(h http.Header, names ...string) http.Header {
	h = h.Clone()
	for _, n := range names {
		h.Del(n)
	}
	return h
}

func TestValidateResponse(t *testing.T) {
	t.Parallel()
	v := testValidator(t)
	json := http.Header{"Content-Type": {"application/json"}}
	tests := []struct {
		name         string
		method, path string
		status       int
		header       http.Header
		body         string
		wantErr      string
	}{
		{name: "message created", method: "POST", path: "/api/v9/channels/1100000000000000001/messages",
			status: 200, header: bucket("4"), body: message},
		{name: "member role added", method: "PUT",
			path:   "/api/v9/guilds/1000000000000000001/members/1200000000000000001/roles/1300000000000000001",
			status: 204, header: without(bucket("4"), "Content-Type")},
		{name: "channel created", method: "POST", path: "/api/v10/guilds/1000000000000000001/channels",
			status: 201, header: bucket("4"), body: channel},
		{name: "channel fetched", method: "GET", path: "/api/v10/channels/1100000000000000002",
			status: 200, header: bucket("4"), body: channel},
		{name: "channel fetched with a field no channel kind has", method: "GET", path: "/api/v10/channels/1100000000000000002",
			status: 200, header: bucket("4"), body: strings.Replace(channel, `"nsfw":false`, `"nsfw":false,"ticket":12`, 1),
			wantErr: "'ticket'"},
		{name: "interaction callback acknowledged", method: "POST",
			path:   "/api/v10/interactions/1400000000000000001/" + interToken + "/callback",
			status: 204, header: http.Header{}},
		{name: "webhook executed with wait", method: "POST",
			path:   "/api/v10/webhooks/1500000000000000001/" + webhookToken + "?wait=true",
			status: 200, header: bucket("4"), body: strings.Replace(message, `"author":`, `"webhook_id":"1500000000000000001","author":`, 1)},
		{name: "commands overwritten", method: "PUT", path: "/api/v9/applications/1600000000000000001/commands",
			status: 200, header: bucket("1"), body: "[" + command + "]"},
		{name: "429 user scope", method: "POST", path: "/api/v9/channels/1100000000000000001/messages",
			status: 429, header: with(bucket("0"), "Retry-After", "2", "X-RateLimit-Scope", "user"), body: rateLimited},
		{name: "429 shared scope", method: "POST", path: "/api/v9/channels/1100000000000000001/messages",
			status: 429, header: with(bucket("3"), "Retry-After", "2", "X-RateLimit-Scope", "shared"), body: rateLimited},
		{name: "429 global", method: "POST", path: "/api/v9/channels/1100000000000000001/messages",
			status: 429, header: with(json, "Retry-After", "1", "X-RateLimit-Scope", "global", "X-RateLimit-Global", "true"),
			body: `{"code":0,"message":"You are being rate limited.","retry_after":0.42,"global":true}`},
		{name: "429 edge block", method: "POST", path: "/api/v9/channels/1100000000000000001/messages",
			status: 429, header: json,
			body: `{"code":0,"message":"You are being blocked from accessing our API temporarily due to exceeding our rate limits frequently.","retry_after":600,"global":true}`},
		{name: "unknown channel", method: "GET", path: "/api/v10/channels/1100000000000000404",
			status: 404, header: bucket("4"), body: `{"code":10003,"message":"Unknown Channel"}`},
		{name: "invalid form body", method: "POST", path: "/api/v10/guilds/1000000000000000001/channels",
			status: 400, header: bucket("4"),
			body: `{"code":50035,"message":"Invalid Form Body","errors":{"parent_id":{"_errors":[{"code":"CHANNEL_PARENT_MAX_CHANNELS","message":"Maximum number of channels in category reached (50)"}]}}}`},
		{name: "server error", method: "POST", path: "/api/v9/channels/1100000000000000001/messages",
			status: 502, header: http.Header{"Content-Type": {"text/html"}}, body: "<html>502 Bad Gateway</html>"},

		{name: "message missing id", method: "POST", path: "/api/v9/channels/1100000000000000001/messages",
			status: 200, header: bucket("4"), body: strings.Replace(message, `"id":"1800000000000000001",`, "", 1),
			wantErr: "'id'"},
		{name: "message with unknown field", method: "POST", path: "/api/v9/channels/1100000000000000001/messages",
			status: 200, header: bucket("4"), body: strings.Replace(message, `"pinned":false`, `"pinned":false,"rev":3`, 1),
			wantErr: "'rev'"},
		{name: "channel id as a number", method: "POST", path: "/api/v10/guilds/1000000000000000001/channels",
			status: 201, header: bucket("4"), body: strings.Replace(channel, `"id":"1100000000000000002"`, `"id":1100000000000000002`, 1),
			wantErr: "$.id"},
		{name: "bad timestamp", method: "POST", path: "/api/v9/channels/1100000000000000001/messages",
			status: 200, header: bucket("4"), body: strings.Replace(message, "2026-11-29T22:00:00.000000+00:00", "yesterday", 1),
			wantErr: "timestamp"},
		{name: "undocumented status", method: "POST", path: "/api/v9/channels/1100000000000000001/messages",
			status: 201, header: bucket("4"), body: message, wantErr: "201"},
		{name: "non-integer remaining", method: "POST", path: "/api/v9/channels/1100000000000000001/messages",
			status: 200, header: with(bucket("4"), "X-RateLimit-Remaining", "4.0"), body: message,
			wantErr: "X-RateLimit-Remaining"},
		{name: "bucket header missing", method: "POST", path: "/api/v9/channels/1100000000000000001/messages",
			status: 200, header: without(bucket("4"), "X-RateLimit-Bucket"), body: message, wantErr: "X-RateLimit-Bucket is missing"},
		{name: "429 with Retry-After in milliseconds", method: "POST", path: "/api/v9/channels/1100000000000000001/messages",
			status: 429, header: with(bucket("0"), "Retry-After", "1337", "X-RateLimit-Scope", "user"), body: rateLimited,
			wantErr: "Retry-After"},
		{name: "429 without retry_after", method: "POST", path: "/api/v9/channels/1100000000000000001/messages",
			status: 429, header: with(bucket("0"), "Retry-After", "2", "X-RateLimit-Scope", "user"),
			body: `{"code":0,"message":"You are being rate limited.","global":false}`, wantErr: "retry_after"},
		{name: "429 without code", method: "POST", path: "/api/v9/channels/1100000000000000001/messages",
			status: 429, header: with(bucket("0"), "Retry-After", "2", "X-RateLimit-Scope", "user"),
			body: `{"message":"You are being rate limited.","retry_after":1.337,"global":false}`, wantErr: "code"},
		{name: "error without code", method: "GET", path: "/api/v10/channels/1100000000000000404",
			status: 404, header: bucket("4"), body: `{"message":"Unknown Channel"}`, wantErr: "code"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRequest(tc.method, tc.path, "", "")
			err := v.ValidateResponse(r, nil, tc.status, tc.header, []byte(tc.body))
			checkErr(t, err, tc.wantErr)
		})
	}
}
