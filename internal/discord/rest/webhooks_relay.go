package rest

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
)

// RelayedExecute is a webhook execute whose body arrived already encoded,
// for the webhook proxy: the JSON or multipart/form-data body a service
// sent, relayed unchanged.
type RelayedExecute struct {
	WebhookID, Token string
	// Variant is "", "slack" or "github": Discord's compatible routes.
	// GitHubEvent is the X-GitHub-Event of a github one, which tells
	// Discord what the payload is.
	Variant     string
	GitHubEvent string
	ThreadID    string
	ContentType string
	Body        []byte
}

// RelayWebhook sends e with wait=true, so the answer proves the message
// exists and is returned as Discord encoded it. The compatible variants
// answer no message (Slack's "ok", GitHub's 204): nil.
func (c *Client) RelayWebhook(ctx context.Context, e RelayedExecute) (json.RawMessage, error) {
	q := url.Values{"wait": {"true"}}
	if e.ThreadID != "" {
		q.Set("thread_id", e.ThreadID)
	}
	segs := []string{"webhooks", e.WebhookID, e.Token}
	if e.Variant != "" {
		segs = append(segs, e.Variant)
	}
	cl := call{method: http.MethodPost, path: path(segs...), query: q, raw: e.Body, rawType: e.ContentType, token: true}
	if e.GitHubEvent != "" {
		cl.header = http.Header{"X-Github-Event": {e.GitHubEvent}}
	}
	if e.Variant != "" {
		return nil, c.do(ctx, cl, nil)
	}
	var out json.RawMessage
	err := c.do(ctx, cl, &out)
	return out, err
}
