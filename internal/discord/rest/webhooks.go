package rest

import (
	"context"
	"net/http"
	"net/url"

	"github.com/bwmarrin/discordgo"
)

// WebhookMessage is the body of a webhook execute or an interaction
// follow-up. Username, AvatarURL and ThreadName apply to webhooks only.
type WebhookMessage struct {
	Content         string                            `json:"content,omitempty"`
	Username        string                            `json:"username,omitempty"`
	AvatarURL       string                            `json:"avatar_url,omitempty"`
	TTS             bool                              `json:"tts,omitempty"`
	Embeds          []*discordgo.MessageEmbed         `json:"embeds,omitempty"`
	AllowedMentions *discordgo.MessageAllowedMentions `json:"allowed_mentions,omitempty"`
	Components      []discordgo.MessageComponent      `json:"components,omitempty"`
	Flags           discordgo.MessageFlags            `json:"flags,omitempty"`
	ThreadName      string                            `json:"thread_name,omitempty"`
	Files           []*discordgo.File                 `json:"-"`
}

// CreateWebhook creates a webhook in a channel (Manage Webhooks); its
// token is in the answer.
func (c *Client) CreateWebhook(ctx context.Context, channelID, name, reason string) (*discordgo.Webhook, error) {
	var out discordgo.Webhook
	err := c.do(ctx, call{method: http.MethodPost, path: path("channels", channelID, "webhooks"),
		body: map[string]string{"name": name}, reason: reason}, &out)
	return &out, err
}

// Webhook reads a webhook as the bot (Manage Webhooks).
func (c *Client) Webhook(ctx context.Context, webhookID string) (*discordgo.Webhook, error) {
	var out discordgo.Webhook
	err := c.do(ctx, call{method: http.MethodGet, path: path("webhooks", webhookID)}, &out)
	return &out, err
}

// WebhookWithToken reads a webhook with its token, without the bot's
// authority; a 404 (10015) means it was deleted.
func (c *Client) WebhookWithToken(ctx context.Context, webhookID, token string) (*discordgo.Webhook, error) {
	var out discordgo.Webhook
	err := c.do(ctx, call{method: http.MethodGet, path: path("webhooks", webhookID, token), token: true}, &out)
	return &out, err
}

// ExecuteOptions are the query parameters of a webhook execute.
type ExecuteOptions struct {
	// Wait asks Discord to answer with the created message instead of
	// 204, which is how a delivery learns it happened.
	Wait bool
	// ThreadID posts into that thread of the webhook's channel.
	ThreadID string
}

// ExecuteWebhook posts m through a webhook. With o.Wait the created
// message is returned; without it the answer is nil.
func (c *Client) ExecuteWebhook(ctx context.Context, webhookID, token string, m WebhookMessage, o ExecuteOptions) (*discordgo.Message, error) {
	q := url.Values{}
	if o.Wait {
		q.Set("wait", "true")
	}
	if o.ThreadID != "" {
		q.Set("thread_id", o.ThreadID)
	}
	cl := call{method: http.MethodPost, path: path("webhooks", webhookID, token), query: q, body: m, files: m.Files, token: true}
	if !o.Wait {
		return nil, c.do(ctx, cl, nil)
	}
	var out discordgo.Message
	err := c.do(ctx, cl, &out)
	return &out, err
}

// WebhookMessage reads a message a webhook sent.
func (c *Client) WebhookMessage(ctx context.Context, webhookID, token, messageID string) (*discordgo.Message, error) {
	var out discordgo.Message
	err := c.do(ctx, call{method: http.MethodGet, path: path("webhooks", webhookID, token, "messages", messageID), token: true}, &out)
	return &out, err
}

// EditWebhookMessage edits a message a webhook sent.
func (c *Client) EditWebhookMessage(ctx context.Context, webhookID, token, messageID string, e MessageEdit) (*discordgo.Message, error) {
	var out discordgo.Message
	err := c.do(ctx, call{method: http.MethodPatch, path: path("webhooks", webhookID, token, "messages", messageID), body: e, token: true}, &out)
	return &out, err
}

// DeleteWebhookMessage deletes a message a webhook sent.
func (c *Client) DeleteWebhookMessage(ctx context.Context, webhookID, token, messageID string) error {
	return c.do(ctx, call{method: http.MethodDelete, path: path("webhooks", webhookID, token, "messages", messageID), token: true}, nil)
}
