package transport

import (
	"net/http"
	"testing"
	"time"
)

func hdr(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	return h
}

func TestParse429(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		h     http.Header
		body  string
		scope string
		retry time.Duration
	}{
		{"user scope uses the exact body value", hdr("X-RateLimit-Scope", "user", "Retry-After", "2", "X-RateLimit-Bucket", "abc", "X-RateLimit-Limit", "5"),
			`{"message":"You are being rate limited.","retry_after":1.337,"global":false}`, "user", 1337 * time.Millisecond},
		{"shared scope", hdr("X-RateLimit-Scope", "shared", "Retry-After", "1", "X-RateLimit-Bucket", "abc"),
			`{"retry_after":0.5,"global":false}`, "shared", 500 * time.Millisecond},
		{"global names no bucket", hdr("X-RateLimit-Global", "true", "X-RateLimit-Scope", "global", "Retry-After", "1"),
			`{"retry_after":0.0421,"global":true}`, "global", 43 * time.Millisecond},
		{"global from the body alone", hdr("Retry-After", "1", "X-RateLimit-Scope", "global"),
			`{"retry_after":0.2,"global":true}`, "global", 200 * time.Millisecond},
		{"edge block has no rate-limit headers", hdr("Retry-After", "3600"),
			`{"code":0,"message":"You are being blocked from accessing our API temporarily","retry_after":3599.5,"global":false}`, "edge", 3599500 * time.Millisecond},
		{"edge block without JSON falls back to Retry-After", hdr("Retry-After", "7"), `<html>1015</html>`, "edge", 7 * time.Second},
		{"missing scope with bucket headers is user", hdr("X-RateLimit-Bucket", "abc", "X-RateLimit-Limit", "5"), `{"retry_after":1}`, "user", time.Second},
	}
	for _, tc := range tests {
		got := parse429(tc.h, []byte(tc.body))
		if got.scope != tc.scope || got.retryAfter != tc.retry {
			t.Errorf("%s: got scope %q retry %s, want %q %s", tc.name, got.scope, got.retryAfter, tc.scope, tc.retry)
		}
	}
}

func TestParseBucketHeaders(t *testing.T) {
	t.Parallel()
	b := parseBucketHeaders(hdr("X-RateLimit-Limit", "5", "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "1470173023.123",
		"X-RateLimit-Reset-After", "4.9994", "X-RateLimit-Bucket", "abcd1234"))
	if !b.ok || b.limit != 5 || b.remaining != 0 || b.resetAfter != 5000*time.Millisecond || b.hash != "abcd1234" {
		t.Errorf("got %+v", b)
	}
	if parseBucketHeaders(hdr("X-RateLimit-Global", "true")).ok {
		t.Error("a response without bucket headers must not update a bucket")
	}
}
