package rest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"github.com/bwmarrin/discordgo"
)

// NewMessage is the body of a channel message create.
type NewMessage struct {
	Content         string                            `json:"content,omitempty"`
	Embeds          []*discordgo.MessageEmbed         `json:"embeds,omitempty"`
	Components      []discordgo.MessageComponent      `json:"components,omitempty"`
	AllowedMentions *discordgo.MessageAllowedMentions `json:"allowed_mentions,omitempty"`
	Flags           discordgo.MessageFlags            `json:"flags,omitempty"`
	Reference       *discordgo.MessageReference       `json:"message_reference,omitempty"`
	// Nonce identifies this message for Discord's deduplication: a job
	// passes one derived from its idempotency key, so every attempt sends
	// the same. CreateMessage fills a random one when empty, which still
	// makes the engine's own resends safe.
	Nonce        string            `json:"nonce,omitempty"`
	EnforceNonce bool              `json:"enforce_nonce,omitempty"`
	Files        []*discordgo.File `json:"-"`
}

// MessageEdit is the body of a message edit; nil fields stay as they are.
type MessageEdit struct {
	Content         *string                           `json:"content,omitempty"`
	Embeds          *[]*discordgo.MessageEmbed        `json:"embeds,omitempty"`
	Components      *[]discordgo.MessageComponent     `json:"components,omitempty"`
	AllowedMentions *discordgo.MessageAllowedMentions `json:"allowed_mentions,omitempty"`
	Flags           discordgo.MessageFlags            `json:"flags,omitempty"`
}

// maxNonce is Discord's limit on a nonce's length.
const maxNonce = 25

// CreateMessage posts m in a channel with a nonce and enforce_nonce, so
// Discord creates it at most once however often it is sent: the engine
// may resend it after a lost answer, and an unknown outcome is reconciled
// by sending again.
func (c *Client) CreateMessage(ctx context.Context, channelID string, m NewMessage) (*discordgo.Message, error) {
	if m.Nonce == "" {
		m.Nonce = randomNonce()
	}
	m.Nonce = truncate(m.Nonce, maxNonce)
	m.EnforceNonce = true
	var out discordgo.Message
	err := c.do(ctx, call{method: http.MethodPost, path: path("channels", channelID, "messages"), body: m, files: m.Files, idempotent: true}, &out)
	return &out, err
}

func randomNonce() string {
	var b [12]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// EditMessage edits a message the bot sent.
func (c *Client) EditMessage(ctx context.Context, channelID, messageID string, e MessageEdit) (*discordgo.Message, error) {
	var out discordgo.Message
	err := c.do(ctx, call{method: http.MethodPatch, path: path("channels", channelID, "messages", messageID), body: e}, &out)
	return &out, err
}

// DeleteMessage deletes a message; reason goes to the audit log when the
// message is someone else's.
func (c *Client) DeleteMessage(ctx context.Context, channelID, messageID, reason string) error {
	return c.do(ctx, call{method: http.MethodDelete, path: path("channels", channelID, "messages", messageID), reason: reason}, nil)
}

// Message reads one message.
func (c *Client) Message(ctx context.Context, channelID, messageID string) (*discordgo.Message, error) {
	var out discordgo.Message
	err := c.do(ctx, call{method: http.MethodGet, path: path("channels", channelID, "messages", messageID)}, &out)
	return &out, err
}

// MessageQuery selects a page of a channel's messages: at most one of
// Before, After and Around, and Limit from 1 to 100 (0: Discord's 50).
type MessageQuery struct {
	Before, After, Around string
	Limit                 int
}

// Messages reads one page of a channel's messages, newest first, as
// Discord returns them.
func (c *Client) Messages(ctx context.Context, channelID string, q MessageQuery) ([]*discordgo.Message, error) {
	v := url.Values{}
	for k, s := range map[string]string{"before": q.Before, "after": q.After, "around": q.Around} {
		if s != "" {
			v.Set(k, s)
		}
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	var out []*discordgo.Message
	err := c.do(ctx, call{method: http.MethodGet, path: path("channels", channelID, "messages"), query: v}, &out)
	return out, err
}

// MessagesPerPage is the most messages Discord returns for one read.
const MessagesPerPage = 100

// MessagesPage reads the page of at most MessagesPerPage of a channel's
// messages after the message id after ("0": from the first), oldest
// first; a shorter page is the channel's last.
func (c *Client) MessagesPage(ctx context.Context, channelID, after string) ([]*discordgo.Message, error) {
	page, err := c.Messages(ctx, channelID, MessageQuery{After: after, Limit: MessagesPerPage})
	// Discord answers newest first.
	slices.Reverse(page)
	return page, err
}

// MessagesAfter walks a channel's messages after the message id after
// ("0": from the first), oldest first, a page a request, stopping at the
// first error (yielded last) or when the caller stops. A reader of a
// whole channel walks it this way without holding it all in memory.
func (c *Client) MessagesAfter(ctx context.Context, channelID, after string) iter.Seq2[*discordgo.Message, error] {
	return func(yield func(*discordgo.Message, error) bool) {
		for {
			page, err := c.MessagesPage(ctx, channelID, after)
			if err != nil {
				yield(nil, err)
				return
			}
			for _, m := range page {
				if !yield(m, nil) {
					return
				}
			}
			if len(page) < MessagesPerPage {
				return
			}
			after = page[len(page)-1].ID
		}
	}
}

// BulkDeleteMessages deletes 2 to 100 messages younger than 14 days in
// one request. Another count is refused before anything is sent.
func (c *Client) BulkDeleteMessages(ctx context.Context, channelID string, messageIDs []string, reason string) error {
	if n := len(messageIDs); n < 2 || n > 100 {
		return fmt.Errorf("discord: bulk delete takes 2 to 100 messages, got %d", n)
	}
	return c.do(ctx, call{method: http.MethodPost, path: path("channels", channelID, "messages", "bulk-delete"),
		body: map[string][]string{"messages": messageIDs}, reason: reason}, nil)
}

// PinMessage pins a message in its channel.
func (c *Client) PinMessage(ctx context.Context, channelID, messageID, reason string) error {
	return c.do(ctx, call{method: http.MethodPut, path: path("channels", channelID, "messages", "pins", messageID), reason: reason}, nil)
}

// UnpinMessage unpins a message.
func (c *Client) UnpinMessage(ctx context.Context, channelID, messageID, reason string) error {
	return c.do(ctx, call{method: http.MethodDelete, path: path("channels", channelID, "messages", "pins", messageID), reason: reason}, nil)
}

// Pin is one pinned message.
type Pin struct {
	PinnedAt string             `json:"pinned_at"`
	Message  *discordgo.Message `json:"message"`
}

// Pins reads a channel's pinned messages, newest pin first (up to 50).
func (c *Client) Pins(ctx context.Context, channelID string) ([]Pin, error) {
	var out struct {
		Items []Pin `json:"items"`
	}
	err := c.do(ctx, call{method: http.MethodGet, path: path("channels", channelID, "messages", "pins")}, &out)
	return out.Items, err
}

// AddReaction reacts to a message as the bot. emoji is a unicode emoji or
// a custom one as name:id.
func (c *Client) AddReaction(ctx context.Context, channelID, messageID, emoji string) error {
	return c.do(ctx, call{method: http.MethodPut, path: path("channels", channelID, "messages", messageID, "reactions", emoji, "@me")}, nil)
}

// RemoveOwnReaction removes the bot's reaction.
func (c *Client) RemoveOwnReaction(ctx context.Context, channelID, messageID, emoji string) error {
	return c.do(ctx, call{method: http.MethodDelete, path: path("channels", channelID, "messages", messageID, "reactions", emoji, "@me")}, nil)
}

// RemoveUserReaction removes a member's reaction (Manage Messages).
func (c *Client) RemoveUserReaction(ctx context.Context, channelID, messageID, emoji, userID string) error {
	return c.do(ctx, call{method: http.MethodDelete, path: path("channels", channelID, "messages", messageID, "reactions", emoji, userID)}, nil)
}

// RemoveAllReactions removes every reaction from a message (Manage Messages).
func (c *Client) RemoveAllReactions(ctx context.Context, channelID, messageID string) error {
	return c.do(ctx, call{method: http.MethodDelete, path: path("channels", channelID, "messages", messageID, "reactions")}, nil)
}

// Reactions reads up to limit (1–100) users who reacted with emoji, after
// the user id after ("" from the first).
func (c *Client) Reactions(ctx context.Context, channelID, messageID, emoji, after string, limit int) ([]*discordgo.User, error) {
	v := url.Values{}
	if after != "" {
		v.Set("after", after)
	}
	if limit > 0 {
		v.Set("limit", strconv.Itoa(limit))
	}
	var out []*discordgo.User
	err := c.do(ctx, call{method: http.MethodGet, path: path("channels", channelID, "messages", messageID, "reactions", emoji), query: v}, &out)
	return out, err
}
