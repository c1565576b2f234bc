package spec

import (
	"net/http"
	"strings"
)

// redact removes the secrets r carries from s: the webhook or interaction
// token in its path and its Authorization header, which the validator's
// messages may quote.
func redact(r *http.Request, s string) string {
	if tok := pathToken(r.URL.Path); tok != "" {
		s = strings.ReplaceAll(s, tok, "{token}")
	}
	if auth := r.Header.Get("Authorization"); auth != "" {
		s = strings.ReplaceAll(s, auth, "{authorization}")
	}
	return s
}

// pathToken returns the token segment of a webhook or interaction path
// (/webhooks/{id}/{token}..., /interactions/{id}/{token}/callback).
func pathToken(path string) string {
	segs := strings.Split(path, "/")
	for i, seg := range segs {
		if (seg == "webhooks" || seg == "interactions") && i+2 < len(segs) {
			return segs[i+2]
		}
	}
	return ""
}
