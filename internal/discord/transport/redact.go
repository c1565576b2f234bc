package transport

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
)

// redact rewrites an error from sending req so that it never holds the
// request's URL, whose path may carry an interaction or webhook token.
// net/http reports a failed request as an *url.Error whose text is the full
// URL (`Post "https://discord.com/api/v10/interactions/<id>/<token>/callback":
// dial tcp ...`), and that text travels into TransientError and
// UnknownOutcomeError messages and into logs. The result is an *url.Error
// naming the route's template instead, wrapping the same underlying error,
// so errors.Is and errors.As still find context.DeadlineExceeded, a
// *net.OpError and the like.
func redact(req *http.Request, r Route, err error) error {
	op, inner := req.Method, err
	var ue *url.Error
	if errors.As(err, &ue) {
		op, inner = ue.Op, ue.Err
	}
	if inner == nil {
		inner = errors.New("request failed")
	}
	if msg := inner.Error(); leaks(msg, req, r) {
		inner = &scrubbed{msg: scrub(msg, req, r), err: inner}
	}
	return &url.Error{Op: op, URL: r.Template, Err: inner}
}

// secrets are the strings of req that must not appear in an error: its
// URL and path, and the token of a token-authenticated route, longest first.
func secrets(req *http.Request, r Route) []string {
	s := []string{req.URL.String(), req.URL.EscapedPath(), req.URL.Path}
	if r.TokenAuth() && r.Major != "" {
		tok := r.Major[strings.LastIndex(r.Major, "/")+1:]
		s = append(s, url.PathEscape(tok), tok)
	}
	return s
}

func leaks(msg string, req *http.Request, r Route) bool {
	for _, s := range secrets(req, r) {
		if s != "" && strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

func scrub(msg string, req *http.Request, r Route) string {
	for _, s := range secrets(req, r) {
		if s != "" {
			msg = strings.ReplaceAll(msg, s, "{redacted}")
		}
	}
	return msg
}

// scrubbed is an error whose text had the request's URL or token removed;
// it still unwraps to the original for errors.Is and errors.As.
type scrubbed struct {
	msg string
	err error
}

func (s *scrubbed) Error() string { return s.msg }
func (s *scrubbed) Unwrap() error { return s.err }

// Timeout keeps url.Error's Timeout working through the wrapper.
func (s *scrubbed) Timeout() bool {
	var t interface{ Timeout() bool }
	return errors.As(s.err, &t) && t.Timeout()
}
