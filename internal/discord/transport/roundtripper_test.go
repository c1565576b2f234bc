package transport

import (
	"net/http"
	"testing"
)

type recordRT struct{ got *http.Request }

func (r *recordRT) RoundTrip(req *http.Request) (*http.Response, error) {
	r.got = req
	return &http.Response{StatusCode: 204, Body: http.NoBody, Request: req}, nil
}

func TestRewrite(t *testing.T) {
	t.Parallel()
	tests := []struct{ base, in, want string }{
		{"http://127.0.0.1:7000/api/v10", "https://discord.com/api/v9/channels/1/messages", "http://127.0.0.1:7000/api/v10/channels/1/messages"},
		{"http://127.0.0.1:7000/api/v10/", "https://discord.com/api/v10/gateway", "http://127.0.0.1:7000/api/v10/gateway"},
		{"http://127.0.0.1:7000", "https://discord.com/api/v9/gateway", "http://127.0.0.1:7000/api/v9/gateway"},
		{"http://127.0.0.1:7000/api/v10", "https://cdn.discordapp.com/attachments/1/2/a.png", "https://cdn.discordapp.com/attachments/1/2/a.png"},
		{"http://127.0.0.1:7000/api/v10", "wss://gateway.discord.gg/?v=9", "wss://gateway.discord.gg/?v=9"},
	}
	for _, tc := range tests {
		next := &recordRT{}
		rt, err := Rewrite(next, tc.base)
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequest("GET", tc.in, nil)
		if _, err := rt.RoundTrip(req); err != nil {
			t.Fatal(err)
		}
		if got := next.got.URL.String(); got != tc.want {
			t.Errorf("Rewrite(%s) %s = %s, want %s", tc.base, tc.in, got, tc.want)
		}
		if req.URL.String() != tc.in {
			t.Errorf("the caller's request was changed: %s", req.URL)
		}
	}
}
