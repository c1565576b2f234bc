// Package rest is herald's one typed Discord REST client. Every Discord
// call herald makes — the fast path's interaction answer, follow-ups and
// edits of @original, command registration and every job — goes through a
// Client, which sends it through the transport engine (rate limits,
// priorities, retries) with the bot token set once. discordgo stays for
// the gateway and its types.
//
// Every non-2xx answer comes back as a typed error from the transport: an
// *transport.APIError carrying Discord's JSON code, message and Class, or
// one of the engine's own (*transport.RateLimitedError when a job's max
// wait is exceeded, *transport.UnknownOutcomeError, ...); transport.Classify
// maps any of them to what a job should do.
package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/discord/transport"
)

// Client calls Discord's REST API as one bot. It is safe for concurrent use.
type Client struct {
	engine *transport.Engine
	base   string // e.g. https://discord.com/api/v10
	auth   string // "Bot <token>"; never logged or put in an error
	appID  string
}

// New returns a client sending through e to apiBase (Discord's
// https://discord.com/api/v10, or the simulator's) as the bot with token
// and application id appID.
func New(e *transport.Engine, apiBase, token, appID string) *Client {
	return &Client{engine: e, base: strings.TrimSuffix(apiBase, "/"), auth: "Bot " + strings.TrimPrefix(token, "Bot "), appID: appID}
}

// ApplicationID is the bot's application id.
func (c *Client) ApplicationID() string { return c.appID }

// call is one REST request.
type call struct {
	method string
	path   string // below the API base, with ids and tokens already escaped
	query  url.Values
	body   any               // JSON-encoded when not nil
	files  []*discordgo.File // sent as multipart/form-data with payload_json
	// raw is a body already encoded as rawType (JSON or multipart), sent
	// as it is: what a proxy relays.
	raw     []byte
	rawType string
	header  http.Header // sent as they are, beside the client's own
	reason  string      // X-Audit-Log-Reason for moderation calls
	// token says the path carries a webhook or interaction token that
	// authenticates the call; the bot token is then not sent, so a 401
	// condemns that webhook, not the bot.
	token bool
	// idempotent marks a POST that Discord deduplicates (a message with a
	// nonce and enforce_nonce), which the engine may resend after a lost
	// answer.
	idempotent bool
}

// maxReason is Discord's limit on X-Audit-Log-Reason, in characters.
const maxReason = 512

// do sends cl and decodes a 2xx answer's JSON into out (when not nil).
func (c *Client) do(ctx context.Context, cl call, out any) error {
	var body io.Reader
	contentType := ""
	switch {
	case cl.rawType != "":
		contentType, body = cl.rawType, bytes.NewReader(cl.raw)
	case len(cl.files) > 0:
		ct, b, err := discordgo.MultipartBodyWithJSON(cl.body, cl.files)
		if err != nil {
			return fmt.Errorf("discord: %s: encode multipart body: %w", cl.method, err)
		}
		contentType, body = ct, bytes.NewReader(b)
	case cl.body != nil:
		b, err := json.Marshal(cl.body)
		if err != nil {
			return fmt.Errorf("discord: %s: encode body: %w", cl.method, err)
		}
		contentType, body = "application/json", bytes.NewReader(b)
	}
	u := c.base + cl.path
	if len(cl.query) > 0 {
		u += "?" + cl.query.Encode()
	}
	if cl.idempotent {
		ctx = transport.WithIdempotent(ctx)
	}
	req, err := http.NewRequestWithContext(ctx, cl.method, u, body)
	if err != nil {
		// The URL may hold a token: name only the method.
		return fmt.Errorf("discord: %s: build request: %w", cl.method, errors.Unwrap(err))
	}
	for k, v := range cl.header {
		req.Header[k] = v
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if !cl.token {
		req.Header.Set("Authorization", c.auth)
	}
	if cl.reason != "" {
		req.Header.Set("X-Audit-Log-Reason", url.PathEscape(truncate(cl.reason, maxReason)))
	}
	resp, err := c.engine.Do(req)
	if err != nil {
		if resp != nil {
			resp.Body.Close()
		}
		return err
	}
	defer resp.Body.Close()
	if out == nil || resp.StatusCode == http.StatusNoContent {
		io.Copy(io.Discard, resp.Body)
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("discord: %s %s: decode answer: %w", cl.method, transport.ParseRoute(cl.method, cl.path, c.appID).Template, err)
	}
	return nil
}

// truncate cuts s to at most n characters (not bytes).
func truncate(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n])
	}
	return s
}

// path joins segments below the API base, escaping each one, so an id or
// a token can never change the route.
func path(segs ...string) string {
	var b strings.Builder
	for _, s := range segs {
		b.WriteByte('/')
		b.WriteString(url.PathEscape(s))
	}
	return b.String()
}
