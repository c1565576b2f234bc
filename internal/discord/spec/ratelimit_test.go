package spec

import (
	"net/http"
	"strings"
	"testing"
)

func TestCheckRateLimitHeaders(t *testing.T) {
	t.Parallel()
	json := http.Header{"Content-Type": {"application/json"}}
	global := with(json, "Retry-After", "1", "X-RateLimit-Scope", "global", "X-RateLimit-Global", "true")
	const globalBody = `{"code":0,"message":"You are being rate limited.","retry_after":0.42,"global":true}`
	const edgeBody = `{"code":0,"message":"You are being blocked from accessing our API temporarily.","retry_after":600,"global":true}`
	tests := []struct {
		name    string
		status  int
		header  http.Header
		body    string
		wantErr string
	}{
		{name: "success with a bucket", status: 200, header: bucket("4")},
		{name: "success without a bucket", status: 200, header: json},
		{name: "remaining zero", status: 204, header: bucket("0")},
		{name: "whole-second reset", status: 200, header: with(bucket("4"), "X-RateLimit-Reset", "1764453601", "X-RateLimit-Reset-After", "2")},
		{name: "user 429", status: 429, header: with(bucket("0"), "Retry-After", "2", "X-RateLimit-Scope", "user"), body: rateLimited},
		{name: "user 429 with a code", status: 429, header: with(bucket("0"), "Retry-After", "2", "X-RateLimit-Scope", "user"),
			body: `{"message":"You are being rate limited.","retry_after":1.337,"global":false,"code":20016}`},
		{name: "shared 429", status: 429, header: with(bucket("2"), "Retry-After", "2", "X-RateLimit-Scope", "shared"),
			body: `{"code":0,"message":"The resource is being rate limited.","retry_after":1.337,"global":false}`},
		{name: "whole retry_after", status: 429, header: with(bucket("0"), "Retry-After", "3", "X-RateLimit-Scope", "user"),
			body: `{"code":0,"message":"You are being rate limited.","retry_after":3,"global":false}`},
		{name: "global 429", status: 429, header: global, body: globalBody},
		{name: "edge block", status: 429, header: json, body: edgeBody},

		{name: "partial bucket headers", status: 200, header: without(bucket("4"), "X-RateLimit-Reset-After"), wantErr: "X-RateLimit-Reset-After is missing"},
		{name: "limit zero", status: 200, header: with(bucket("0"), "X-RateLimit-Limit", "0"), wantErr: "X-RateLimit-Limit is 0"},
		{name: "remaining above limit", status: 200, header: bucket("6"), wantErr: "X-RateLimit-Remaining is 6"},
		{name: "negative remaining", status: 200, header: bucket("-1"), wantErr: "X-RateLimit-Remaining is -1"},
		{name: "reset as a date", status: 200, header: with(bucket("4"), "X-RateLimit-Reset", "Sat, 29 Nov 2026 22:00:00 GMT"), wantErr: "X-RateLimit-Reset"},
		{name: "reset-after in milliseconds form", status: 200, header: with(bucket("4"), "X-RateLimit-Reset-After", "1337ms"), wantErr: "X-RateLimit-Reset-After"},
		{name: "negative reset-after", status: 200, header: with(bucket("4"), "X-RateLimit-Reset-After", "-0.5"), wantErr: "X-RateLimit-Reset-After"},
		{name: "scope on a success", status: 200, header: with(bucket("4"), "X-RateLimit-Scope", "user"), wantErr: "X-RateLimit-Scope on a 200"},
		{name: "429 without scope", status: 429, header: with(bucket("0"), "Retry-After", "2"), body: rateLimited, wantErr: "X-RateLimit-Scope"},
		{name: "429 with unknown scope", status: 429, header: with(bucket("0"), "Retry-After", "2", "X-RateLimit-Scope", "bucket"), body: rateLimited, wantErr: `"bucket"`},
		{name: "429 without Retry-After", status: 429, header: with(bucket("0"), "X-RateLimit-Scope", "user"), body: rateLimited, wantErr: "lacks Retry-After"},
		{name: "Retry-After rounded down", status: 429, header: with(bucket("0"), "Retry-After", "1", "X-RateLimit-Scope", "user"), body: rateLimited, wantErr: "want retry_after 1.337 rounded up, 2"},
		{name: "Retry-After with decimals", status: 429, header: with(bucket("0"), "Retry-After", "1.337", "X-RateLimit-Scope", "user"), body: rateLimited, wantErr: "not whole seconds"},
		{name: "user 429 with requests remaining", status: 429, header: with(bucket("3"), "Retry-After", "2", "X-RateLimit-Scope", "user"), body: rateLimited, wantErr: `want "0"`},
		{name: "user 429 without bucket headers", status: 429, header: with(json, "Retry-After", "2", "X-RateLimit-Scope", "user"), body: rateLimited, wantErr: "lacks the bucket headers"},
		{name: "per-route 429 flagged global", status: 429, header: with(bucket("0"), "Retry-After", "2", "X-RateLimit-Scope", "user", "X-RateLimit-Global", "true"), body: rateLimited, wantErr: "X-RateLimit-Global"},
		{name: "global 429 with bucket headers", status: 429, header: with(bucket("0"), "Retry-After", "1", "X-RateLimit-Scope", "global", "X-RateLimit-Global", "true"), body: globalBody, wantErr: "global 429 carries bucket headers"},
		{name: "global 429 without global header", status: 429, header: without(global, "X-RateLimit-Global"), body: globalBody, wantErr: "X-RateLimit-Global"},
		{name: "global 429 with user scope", status: 429, header: with(global, "X-RateLimit-Scope", "user"), body: globalBody, wantErr: `want "global"`},
		{name: "retry_after as a string", status: 429, header: with(bucket("0"), "Retry-After", "2", "X-RateLimit-Scope", "user"),
			body: `{"code":0,"message":"You are being rate limited.","retry_after":"1.337","global":false}`, wantErr: "retry_after"},
		{name: "global as a string", status: 429, header: global,
			body: `{"code":0,"message":"You are being rate limited.","retry_after":0.42,"global":"true"}`, wantErr: `"global"`},
		{name: "429 without message", status: 429, header: global, body: `{"code":0,"retry_after":0.42,"global":true}`, wantErr: `"message"`},
		{name: "429 without code", status: 429, header: with(bucket("0"), "Retry-After", "2", "X-RateLimit-Scope", "user"),
			body: `{"message":"You are being rate limited.","retry_after":1.337,"global":false}`, wantErr: `"code"`},
		{name: "429 body not JSON", status: 429, header: global, body: `rate limited`, wantErr: "not a JSON object"},
		{name: "edge block with a bucket", status: 429, header: bucket("0"), body: edgeBody, wantErr: "edge-blocked 429 carries X-RateLimit-Limit"},
		{name: "edge block with Retry-After", status: 429, header: with(json, "Retry-After", "600"), body: edgeBody, wantErr: "edge-blocked 429 carries Retry-After"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := CheckRateLimitHeaders(tc.status, tc.header, []byte(tc.body))
			checkErr(t, err, tc.wantErr)
		})
	}
}

func TestCheckErrorBody(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		status  int
		body    string
		wantErr string
	}{
		{name: "unknown message", status: 404, body: `{"code":10008,"message":"Unknown Message"}`},
		{name: "missing permissions", status: 403, body: `{"code":50013,"message":"Missing Permissions"}`},
		{name: "nested form errors", status: 400, body: `{"code":50035,"message":"Invalid Form Body","errors":` +
			`{"embeds":{"0":{"title":{"_errors":[{"code":"BASE_TYPE_MAX_LENGTH","message":"Must be 256 or fewer in length."}]}}}}}`},
		{name: "success is not an error", status: 200, body: `{"id":"1"}`},
		{name: "server error is not judged", status: 500, body: `<html></html>`},
		{name: "rate limit is judged elsewhere", status: 429, body: rateLimited},

		{name: "not JSON", status: 404, body: `Not Found`, wantErr: "not Discord's JSON error object"},
		{name: "code missing", status: 404, body: `{"message":"Unknown Channel"}`, wantErr: "lacks a code"},
		{name: "code as text", status: 404, body: `{"code":"10003","message":"Unknown Channel"}`, wantErr: "code"},
		{name: "message missing", status: 403, body: `{"code":50013}`, wantErr: "lacks a message"},
		{name: "invalid form body without errors", status: 400, body: `{"code":50035,"message":"Invalid Form Body"}`, wantErr: "lacks its errors object"},
		{name: "errors not an object", status: 400, body: `{"code":50035,"message":"Invalid Form Body","errors":["name"]}`, wantErr: "want an object"},
		{name: "leaf code as a number", status: 400, body: `{"code":50035,"message":"Invalid Form Body","errors":{"name":{"_errors":[{"code":50035,"message":"x"}]}}}`, wantErr: "errors.name._errors"},
		{name: "leaf without message", status: 400, body: `{"code":50035,"message":"Invalid Form Body","errors":{"name":{"_errors":[{"code":"BASE_TYPE_REQUIRED"}]}}}`, wantErr: "errors.name._errors[0]"},
		{name: "empty leaf list", status: 400, body: `{"code":50035,"message":"Invalid Form Body","errors":{"name":{"_errors":[]}}}`, wantErr: "errors.name._errors"},
		{name: "leaf mixed with fields", status: 400, body: `{"code":50035,"message":"Invalid Form Body","errors":{"name":{"_errors":[{"code":"A","message":"b"}],"x":{}}}}`, wantErr: "mixes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			checkErr(t, CheckErrorBody(tc.status, []byte(tc.body)), tc.wantErr)
		})
	}
}

func TestRateLimitChecksRunWithoutSpec(t *testing.T) {
	t.Parallel()
	// The own assertions need no spec file, so they guard the simulator even
	// where HERALD_DISCORD_SPEC is unset.
	err := CheckRateLimitHeaders(429, with(bucket("0"), "Retry-After", "2", "X-RateLimit-Scope", "user"), []byte(rateLimited))
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckRateLimitHeaders(429, bucket("0"), []byte(rateLimited)); err == nil || !strings.Contains(err.Error(), "Retry-After") {
		t.Fatalf("want a missing Retry-After reported, got %v", err)
	}
}
