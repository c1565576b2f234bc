package rest

import (
	"context"
	"net/http"
	"net/url"

	"github.com/bwmarrin/discordgo"
)

// Respond sends an interaction's initial response (the callback), which
// must reach Discord within 3 seconds of the interaction. A second answer
// gets Discord's 40060, "Interaction has already been acknowledged".
func (c *Client) Respond(ctx context.Context, interactionID, token string, r *discordgo.InteractionResponse) error {
	body, files := CallbackBody(r)
	return c.do(ctx, call{method: http.MethodPost, path: path("interactions", interactionID, token, "callback"),
		body: body, files: files, token: true}, nil)
}

// CallbackBody encodes r with only the fields Discord accepts for its
// type — discordgo's InteractionResponseData always sends content, tts,
// embeds and components, which an autocomplete or modal answer must not
// carry — for the callback route or an Interactions Endpoint URL's
// response; files, when there are any, go as multipart beside it.
func CallbackBody(r *discordgo.InteractionResponse) (any, []*discordgo.File) {
	type out struct {
		Type discordgo.InteractionResponseType `json:"type"`
		Data any                               `json:"data,omitempty"`
	}
	d := r.Data
	if d == nil {
		return out{Type: r.Type}, nil
	}
	switch r.Type {
	case discordgo.InteractionApplicationCommandAutocompleteResult:
		choices := d.Choices
		if choices == nil {
			choices = []*discordgo.ApplicationCommandOptionChoice{}
		}
		return out{r.Type, map[string]any{"choices": choices}}, nil
	case discordgo.InteractionResponseModal:
		return out{r.Type, map[string]any{"custom_id": d.CustomID, "title": d.Title, "components": d.Components}}, nil
	case discordgo.InteractionResponseDeferredChannelMessageWithSource, discordgo.InteractionResponseDeferredMessageUpdate:
		if d.Flags == 0 {
			return out{Type: r.Type}, nil
		}
		return out{r.Type, map[string]any{"flags": d.Flags}}, nil
	}
	return out{r.Type, messageData{
		Content: d.Content, TTS: d.TTS, Embeds: d.Embeds, Components: d.Components,
		AllowedMentions: d.AllowedMentions, Flags: d.Flags, Attachments: d.Attachments,
	}}, d.Files
}

// messageData is a message callback's data without discordgo's always-sent
// empty fields.
type messageData struct {
	Content         string                            `json:"content,omitempty"`
	TTS             bool                              `json:"tts,omitempty"`
	Embeds          []*discordgo.MessageEmbed         `json:"embeds,omitempty"`
	Components      []discordgo.MessageComponent      `json:"components,omitempty"`
	AllowedMentions *discordgo.MessageAllowedMentions `json:"allowed_mentions,omitempty"`
	Flags           discordgo.MessageFlags            `json:"flags,omitempty"`
	Attachments     *[]*discordgo.MessageAttachment   `json:"attachments,omitempty"`
}

// Original reads an interaction's original response.
func (c *Client) Original(ctx context.Context, token string) (*discordgo.Message, error) {
	return c.WebhookMessage(ctx, c.appID, token, "@original")
}

// EditOriginal edits an interaction's original response — filling a
// deferred one. Sending the same edit twice leaves the same message, so a
// retry is always safe.
func (c *Client) EditOriginal(ctx context.Context, token string, e MessageEdit) (*discordgo.Message, error) {
	return c.EditWebhookMessage(ctx, c.appID, token, "@original", e)
}

// DeleteOriginal deletes an interaction's original response.
func (c *Client) DeleteOriginal(ctx context.Context, token string) error {
	return c.DeleteWebhookMessage(ctx, c.appID, token, "@original")
}

// CreateFollowup sends a follow-up message for an interaction (within 15
// minutes of it). Discord has no nonce for follow-ups: a lost answer is an
// unknown outcome the caller must reconcile.
func (c *Client) CreateFollowup(ctx context.Context, token string, m WebhookMessage) (*discordgo.Message, error) {
	var out discordgo.Message
	err := c.do(ctx, call{method: http.MethodPost, path: path("webhooks", c.appID, token), query: url.Values{"wait": {"true"}},
		body: m, files: m.Files, token: true}, &out)
	return &out, err
}

// EditFollowup edits a follow-up message.
func (c *Client) EditFollowup(ctx context.Context, token, messageID string, e MessageEdit) (*discordgo.Message, error) {
	return c.EditWebhookMessage(ctx, c.appID, token, messageID, e)
}

// DeleteFollowup deletes a follow-up message.
func (c *Client) DeleteFollowup(ctx context.Context, token, messageID string) error {
	return c.DeleteWebhookMessage(ctx, c.appID, token, messageID)
}
