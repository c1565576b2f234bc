package rest

import (
	"context"
	"iter"
	"net/http"
	"net/url"
	"strconv"

	"github.com/bwmarrin/discordgo"
)

// Guild reads a guild.
func (c *Client) Guild(ctx context.Context, guildID string) (*discordgo.Guild, error) {
	var out discordgo.Guild
	err := c.do(ctx, call{method: http.MethodGet, path: path("guilds", guildID)}, &out)
	return &out, err
}

// Roles reads a guild's roles.
func (c *Client) Roles(ctx context.Context, guildID string) ([]*discordgo.Role, error) {
	var out []*discordgo.Role
	err := c.do(ctx, call{method: http.MethodGet, path: path("guilds", guildID, "roles")}, &out)
	return out, err
}

// Member reads one member of a guild.
func (c *Client) Member(ctx context.Context, guildID, userID string) (*discordgo.Member, error) {
	var out discordgo.Member
	err := c.do(ctx, call{method: http.MethodGet, path: path("guilds", guildID, "members", userID)}, &out)
	return &out, err
}

// Members reads up to limit (1–1000) members with user ids above after
// ("" from the first), in user id order. Needs the Server Members intent.
func (c *Client) Members(ctx context.Context, guildID, after string, limit int) ([]*discordgo.Member, error) {
	v := url.Values{}
	if after != "" {
		v.Set("after", after)
	}
	if limit > 0 {
		v.Set("limit", strconv.Itoa(limit))
	}
	var out []*discordgo.Member
	err := c.do(ctx, call{method: http.MethodGet, path: path("guilds", guildID, "members"), query: v}, &out)
	return out, err
}

// AllMembers walks every member of a guild, 1000 per request, stopping at
// the first error (yielded last) or when the caller stops.
func (c *Client) AllMembers(ctx context.Context, guildID string) iter.Seq2[*discordgo.Member, error] {
	return func(yield func(*discordgo.Member, error) bool) {
		after := ""
		for {
			page, err := c.Members(ctx, guildID, after, 1000)
			if err != nil {
				yield(nil, err)
				return
			}
			for _, m := range page {
				if !yield(m, nil) {
					return
				}
			}
			if len(page) < 1000 {
				return
			}
			after = page[len(page)-1].User.ID
		}
	}
}

// SearchMembers finds up to limit (1–1000) members whose username or
// nickname starts with query.
func (c *Client) SearchMembers(ctx context.Context, guildID, query string, limit int) ([]*discordgo.Member, error) {
	v := url.Values{"query": {query}}
	if limit > 0 {
		v.Set("limit", strconv.Itoa(limit))
	}
	var out []*discordgo.Member
	err := c.do(ctx, call{method: http.MethodGet, path: path("guilds", guildID, "members", "search"), query: v}, &out)
	return out, err
}

// AddMemberRole gives a member a role; reason goes to the audit log.
func (c *Client) AddMemberRole(ctx context.Context, guildID, userID, roleID, reason string) error {
	return c.do(ctx, call{method: http.MethodPut, path: path("guilds", guildID, "members", userID, "roles", roleID), reason: reason}, nil)
}

// RemoveMemberRole takes a role from a member; reason goes to the audit log.
func (c *Client) RemoveMemberRole(ctx context.Context, guildID, userID, roleID, reason string) error {
	return c.do(ctx, call{method: http.MethodDelete, path: path("guilds", guildID, "members", userID, "roles", roleID), reason: reason}, nil)
}

// MemberEdit is the body of a member modify; nil fields stay as they are.
type MemberEdit struct {
	// Roles replaces the member's roles in one request.
	Roles *[]string `json:"roles,omitempty"`
}

// ModifyMember changes a member; reason goes to the audit log.
func (c *Client) ModifyMember(ctx context.Context, guildID, userID string, e MemberEdit, reason string) (*discordgo.Member, error) {
	var out discordgo.Member
	err := c.do(ctx, call{method: http.MethodPatch, path: path("guilds", guildID, "members", userID), body: e, reason: reason}, &out)
	return &out, err
}
