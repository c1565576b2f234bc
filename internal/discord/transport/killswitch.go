package transport

import (
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Discord's JSON error codes that condemn a webhook for good.
const (
	codeUnknownWebhook      = 10015
	codeInvalidWebhookToken = 50027
)

// rejected acts on a 4xx answer: it counts invalid requests, holds all REST
// when Discord's edge blocked the bot, stops all REST when Discord rejected
// the bot token, and stops using a webhook Discord says is gone. The lock
// is held.
func (e *Engine) rejected(b *bucket, it *item, api *APIError, now time.Time) {
	r := it.route
	if api.Status == http.StatusUnauthorized || api.Status == http.StatusForbidden {
		e.invalid.add(r, now) // Discord's invalid-request count includes both
	}
	if api.Class() == Blocked {
		api.RetryAfter = e.cfg.EdgeBlockWait
		e.edgeBlocked(now, api.RetryAfter, blockedBy(api))
	}
	if botTokenRejected(it.req, r, api) && !e.unauthorized {
		e.unauthorized = true
		e.unauthorizedSince = now
		e.unauthorizedReason = fmt.Sprintf("%d %s on %s (code %d: %s)",
			api.Status, http.StatusText(api.Status), r.Key(), api.Code, api.Message)
		e.log.Error("Discord rejected the bot token; all REST requests stop until restart",
			"route", r.Key(), "code", api.Code)
	}
	// Only these codes say the webhook itself is gone. Any other 404 on a
	// webhook route, such as 10008 Unknown Message when editing one of its
	// messages, is about that one target.
	if key := deadKey(r, api.Code); key != "" && !e.deadWebhooks[key] {
		e.deadWebhooks[key] = true
		e.log.Warn("webhook is gone; it will not be used again", "route", r.Key(), "bucket", b.name, "code", api.Code)
	}
}

// deadKey is what an answer with code condemns on webhook route r: the
// webhook (10015 Unknown Webhook: it is gone, whatever the token), or
// only the token the request used (50027 Invalid Webhook Token: someone
// may hold a wrong token for a webhook that works with the right one);
// "" when it condemns nothing.
func deadKey(r Route, code int) string {
	switch {
	case r.Webhook == "":
		return ""
	case code == codeUnknownWebhook:
		return r.Webhook
	case code == codeInvalidWebhookToken:
		return r.Major // the webhook id and its token
	}
	return ""
}

// gone reports whether r's webhook, or the token r uses for it, is
// condemned. The lock is held.
func (e *Engine) gone(r Route) bool {
	return r.Webhook != "" && (e.deadWebhooks[r.Webhook] || e.deadWebhooks[r.Major])
}

// botTokenRejected reports whether a 401 condemns the bot token, which
// stops all REST. Only a request carrying the bot token, on a route that
// the bot token authenticates, can say that. On webhook and interaction
// routes the token in the path authenticates the call — discordgo sends
// Authorization on those too — and their 401 (50027 Invalid Webhook Token)
// condemns only that webhook or interaction.
func botTokenRejected(req *http.Request, r Route, api *APIError) bool {
	if api.Status != http.StatusUnauthorized || api.Code == codeInvalidWebhookToken || r.TokenAuth() {
		return false
	}
	auth := req.Header.Get("Authorization")
	return len(auth) > 4 && strings.EqualFold(auth[:4], "bot ")
}
