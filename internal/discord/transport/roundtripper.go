package transport

import (
	"net/http"
	"net/url"
	"strings"
)

// RoundTripper adapts the engine for an *http.Client, such as discordgo's
// Session.Client, so calls made through discordgo share the same buckets,
// gates and budgets. Discord's answers, errors included, come back as
// responses for the caller to read; only requests the engine ended itself
// (queue full, circuit open, cancelled...) come back as errors.
func (e *Engine) RoundTripper() http.RoundTripper { return roundTripper{e} }

type roundTripper struct{ e *Engine }

func (rt roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := rt.e.Do(req)
	if resp != nil {
		return resp, nil
	}
	return nil, err
}

// Rewrite sends requests made for Discord's production API (discordgo's
// endpoints are fixed at https://discord.com/api/v9) to apiBase instead,
// e.g. the simulator's http://127.0.0.1:7000/api/v10. An apiBase without a
// path keeps each request's own /api/vN path. Other hosts (the gateway's
// websocket, attachments) pass through unchanged.
func Rewrite(next http.RoundTripper, apiBase string) (http.RoundTripper, error) {
	u, err := url.Parse(apiBase)
	if err != nil {
		return nil, err
	}
	return rewriter{next: next, base: u}, nil
}

type rewriter struct {
	next http.RoundTripper
	base *url.URL
}

func (rw rewriter) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Host != "discord.com" || !strings.HasPrefix(req.URL.Path, "/api/") {
		return rw.next.RoundTrip(req)
	}
	r := req.Clone(req.Context())
	r.URL.Scheme, r.URL.Host = rw.base.Scheme, rw.base.Host
	if base := strings.TrimSuffix(rw.base.Path, "/"); base != "" {
		r.URL.Path = base + apiPrefix.ReplaceAllString(req.URL.Path, "")
		r.URL.RawPath = ""
	}
	r.Host = rw.base.Host
	return rw.next.RoundTrip(r)
}
