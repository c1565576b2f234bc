package rest

import (
	"context"
	"net/http"

	"github.com/bwmarrin/discordgo"
)

// Overwrite is one permission overwrite on a channel: for a role
// (discordgo.PermissionOverwriteTypeRole) or a member.
type Overwrite struct {
	ID    string                            `json:"id"`
	Type  discordgo.PermissionOverwriteType `json:"type"`
	Allow int64                             `json:"allow,string"`
	Deny  int64                             `json:"deny,string"`
}

// NewChannel is the body of a guild channel create.
type NewChannel struct {
	Name       string                `json:"name"`
	Type       discordgo.ChannelType `json:"type"`
	Topic      string                `json:"topic,omitempty"`
	ParentID   string                `json:"parent_id,omitempty"`
	Overwrites []Overwrite           `json:"permission_overwrites,omitempty"`
}

// CreateChannel creates a channel (or category) in a guild.
func (c *Client) CreateChannel(ctx context.Context, guildID string, ch NewChannel, reason string) (*discordgo.Channel, error) {
	var out discordgo.Channel
	err := c.do(ctx, call{method: http.MethodPost, path: path("guilds", guildID, "channels"), body: ch, reason: reason}, &out)
	return &out, err
}

// GuildChannels reads every channel of a guild (threads excluded).
func (c *Client) GuildChannels(ctx context.Context, guildID string) ([]*discordgo.Channel, error) {
	var out []*discordgo.Channel
	err := c.do(ctx, call{method: http.MethodGet, path: path("guilds", guildID, "channels")}, &out)
	return out, err
}

// Channel reads a channel or thread.
func (c *Client) Channel(ctx context.Context, channelID string) (*discordgo.Channel, error) {
	var out discordgo.Channel
	err := c.do(ctx, call{method: http.MethodGet, path: path("channels", channelID)}, &out)
	return &out, err
}

// ChannelEdit is the body of a channel or thread modify; nil fields stay
// as they are. Archived, Locked and Invitable apply to threads only.
type ChannelEdit struct {
	Name       *string      `json:"name,omitempty"`
	Topic      *string      `json:"topic,omitempty"`
	ParentID   *string      `json:"parent_id,omitempty"`
	Overwrites *[]Overwrite `json:"permission_overwrites,omitempty"`
	Archived   *bool        `json:"archived,omitempty"`
	Locked     *bool        `json:"locked,omitempty"`
	Invitable  *bool        `json:"invitable,omitempty"`
}

// ModifyChannel changes a channel or thread; reason goes to the audit log.
func (c *Client) ModifyChannel(ctx context.Context, channelID string, e ChannelEdit, reason string) (*discordgo.Channel, error) {
	var out discordgo.Channel
	err := c.do(ctx, call{method: http.MethodPatch, path: path("channels", channelID), body: e, reason: reason}, &out)
	return &out, err
}

// ArchiveThread archives a thread, locking it too when locked is set, so
// only moderators can unarchive it.
func (c *Client) ArchiveThread(ctx context.Context, threadID string, locked bool, reason string) (*discordgo.Channel, error) {
	archived := true
	return c.ModifyChannel(ctx, threadID, ChannelEdit{Archived: &archived, Locked: &locked}, reason)
}

// DeleteChannel deletes a channel, or a thread.
func (c *Client) DeleteChannel(ctx context.Context, channelID, reason string) error {
	return c.do(ctx, call{method: http.MethodDelete, path: path("channels", channelID), reason: reason}, nil)
}

// SetOverwrite creates or replaces one permission overwrite on a channel.
func (c *Client) SetOverwrite(ctx context.Context, channelID string, o Overwrite, reason string) error {
	return c.do(ctx, call{method: http.MethodPut, path: path("channels", channelID, "permissions", o.ID),
		body: struct {
			Type  discordgo.PermissionOverwriteType `json:"type"`
			Allow int64                             `json:"allow,string"`
			Deny  int64                             `json:"deny,string"`
		}{o.Type, o.Allow, o.Deny}, reason: reason}, nil)
}

// DeleteOverwrite removes a role's or member's overwrite from a channel.
func (c *Client) DeleteOverwrite(ctx context.Context, channelID, overwriteID, reason string) error {
	return c.do(ctx, call{method: http.MethodDelete, path: path("channels", channelID, "permissions", overwriteID), reason: reason}, nil)
}

// NewThread is the body of a thread create. Type is
// discordgo.ChannelTypeGuildPrivateThread or ...PublicThread; a thread
// started from a message ignores Type and Invitable.
type NewThread struct {
	Name                string                `json:"name"`
	Type                discordgo.ChannelType `json:"type,omitempty"`
	AutoArchiveDuration int                   `json:"auto_archive_duration,omitempty"`
	Invitable           *bool                 `json:"invitable,omitempty"`
}

// CreateThread starts a thread without a message (a private thread for a
// ticket, say).
func (c *Client) CreateThread(ctx context.Context, channelID string, t NewThread, reason string) (*discordgo.Channel, error) {
	var out discordgo.Channel
	err := c.do(ctx, call{method: http.MethodPost, path: path("channels", channelID, "threads"), body: t, reason: reason}, &out)
	return &out, err
}

// CreateThreadFromMessage starts a public thread on a message.
func (c *Client) CreateThreadFromMessage(ctx context.Context, channelID, messageID string, t NewThread, reason string) (*discordgo.Channel, error) {
	body := struct {
		Name                string `json:"name"`
		AutoArchiveDuration int    `json:"auto_archive_duration,omitempty"`
	}{t.Name, t.AutoArchiveDuration}
	var out discordgo.Channel
	err := c.do(ctx, call{method: http.MethodPost, path: path("channels", channelID, "messages", messageID, "threads"), body: body, reason: reason}, &out)
	return &out, err
}

// AddThreadMember adds a member to a thread.
func (c *Client) AddThreadMember(ctx context.Context, threadID, userID string) error {
	return c.do(ctx, call{method: http.MethodPut, path: path("channels", threadID, "thread-members", userID)}, nil)
}

// RemoveThreadMember removes a member from a thread.
func (c *Client) RemoveThreadMember(ctx context.Context, threadID, userID string) error {
	return c.do(ctx, call{method: http.MethodDelete, path: path("channels", threadID, "thread-members", userID)}, nil)
}

// CreateDM opens (or finds) the DM channel with a user; messages go to it
// with CreateMessage.
func (c *Client) CreateDM(ctx context.Context, userID string) (*discordgo.Channel, error) {
	var out discordgo.Channel
	err := c.do(ctx, call{method: http.MethodPost, path: path("users", "@me", "channels"),
		body: map[string]string{"recipient_id": userID}, idempotent: true}, &out)
	return &out, err
}
