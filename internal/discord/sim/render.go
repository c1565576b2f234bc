package sim

import (
	"maps"
	"slices"
	"strconv"
	"time"
)

// The render functions build the JSON objects Discord sends, with every
// field its OpenAPI spec marks required. The lock is held.

func timestamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000+00:00") }

func (s *state) renderUser(id string) map[string]any {
	u, ok := s.users[id]
	if !ok {
		u = &user{id: id, username: "deleted-user"}
	}
	out := map[string]any{
		"id": u.id, "username": u.username, "avatar": nil, "discriminator": "0",
		"public_flags": 0, "flags": 0, "global_name": nil, "primary_guild": nil,
	}
	if u.bot {
		out["bot"] = true
	}
	return out
}

func renderRole(r *role) map[string]any {
	return map[string]any{
		"id": r.id, "name": r.name, "permissions": strconv.FormatUint(r.permissions, 10),
		"position": r.position, "color": r.color,
		"colors": map[string]any{"primary_color": r.color, "secondary_color": nil, "tertiary_color": nil},
		"hoist":  r.hoist, "managed": r.managed, "mentionable": r.mentionable,
		"icon": nil, "unicode_emoji": nil, "flags": 0,
	}
}

func (s *state) renderMember(m *member) map[string]any {
	roles := append([]string{}, m.roles...)
	var timeout any
	if m.timeoutExpiry != nil {
		timeout = timestamp(*m.timeoutExpiry)
	}
	return map[string]any{
		"user": s.renderUser(m.userID), "roles": roles, "nick": m.nick,
		"joined_at": timestamp(m.joinedAt), "avatar": nil, "banner": nil,
		"communication_disabled_until": timeout, "flags": 0, "pending": false,
		"premium_since": nil, "mute": false, "deaf": false,
	}
}

func renderOverwrites(os []overwrite) []any {
	out := make([]any, 0, len(os))
	for _, o := range os {
		out = append(out, map[string]any{
			"id": o.id, "type": o.typ,
			"allow": strconv.FormatUint(o.allow, 10), "deny": strconv.FormatUint(o.deny, 10),
		})
	}
	return out
}

func (s *state) renderChannel(c *channel) map[string]any {
	if c.typ == channelDM {
		out := map[string]any{
			"id": c.id, "type": c.typ, "flags": 0, "last_message_id": nilIfEmpty(c.lastMessageID),
			"recipients": []any{s.renderUser(c.recipientID)},
		}
		if !c.lastPinAt.IsZero() {
			out["last_pin_timestamp"] = timestamp(c.lastPinAt)
		}
		return out
	}
	out := map[string]any{
		"id": c.id, "type": c.typ, "guild_id": c.guildID, "name": c.name, "flags": 0,
		"last_message_id":     nilIfEmpty(c.lastMessageID),
		"parent_id":           nilIfEmpty(c.parentID),
		"rate_limit_per_user": c.rateLimitPerUser,
	}
	if c.isThread() {
		meta := map[string]any{
			"archived": c.archived, "locked": c.locked, "auto_archive_duration": c.autoArchive,
			"archive_timestamp": timestamp(c.archivedAt), "create_timestamp": timestamp(c.createdAt),
		}
		if c.typ == channelPrivateThread {
			meta["invitable"] = c.invitable
		}
		out["owner_id"] = c.ownerID
		out["thread_metadata"] = meta
		out["message_count"] = c.messageCount
		out["member_count"] = len(c.threadMembers)
		out["total_message_sent"] = c.messageCount
		if joined, ok := c.threadMembers[s.botID]; ok {
			out["member"] = map[string]any{"id": c.id, "user_id": s.botID, "join_timestamp": timestamp(joined), "flags": 0}
		}
		return out
	}
	out["position"] = c.position
	out["permission_overwrites"] = renderOverwrites(c.overwrites)
	out["nsfw"] = c.nsfw
	if c.typ != channelCategory {
		out["topic"] = c.topic
	}
	return out
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func (s *state) renderMessage(m *message) map[string]any {
	attachments := make([]any, 0, len(m.attachments))
	for _, a := range m.attachments {
		url := "https://cdn.discordapp.com/attachments/" + m.channelID + "/" + a.id + "/" + a.filename
		att := map[string]any{
			"id": a.id, "filename": a.filename, "size": a.size, "url": url,
			"proxy_url": "https://media.discordapp.net/attachments/" + m.channelID + "/" + a.id + "/" + a.filename,
		}
		if a.contentType != "" {
			att["content_type"] = a.contentType
		}
		if a.description != "" {
			att["description"] = a.description
		}
		attachments = append(attachments, att)
	}
	var edited any
	if m.editedAt != nil {
		edited = timestamp(*m.editedAt)
	}
	msgType := m.typ
	if m.interaction != "" && m.webhookID == m.applicationID {
		msgType = s.interactionMessageType(m)
	}
	mentions := []any{}
	for _, id := range s.mentionedUsers(m.content) {
		mentions = append(mentions, s.renderUser(id))
	}
	out := map[string]any{
		"id": m.id, "channel_id": m.channelID, "type": msgType, "content": m.content,
		"author": s.renderAuthor(m), "mentions": mentions, "mention_roles": []any{},
		"attachments": attachments, "embeds": nonNil(m.embeds), "components": nonNil(m.components),
		"timestamp": timestamp(m.timestamp), "edited_timestamp": edited, "flags": m.flags,
		"pinned": !m.pinnedAt.IsZero(), "mention_everyone": false, "tts": m.tts,
	}
	if len(m.reactions) > 0 {
		out["reactions"] = s.renderReactions(m)
	}
	if m.reference != "" {
		out["message_reference"] = withGuild(map[string]any{"type": 0, "channel_id": m.channelID, "message_id": m.reference}, m.guildID)
	}
	if m.webhookID != "" {
		out["webhook_id"] = m.webhookID
	}
	if m.applicationID != "" {
		out["application_id"] = m.applicationID
	}
	if m.nonce != "" {
		out["nonce"] = m.nonce
	}
	return out
}

// interactionMessageType is 20 (chat input command) for a response to a
// slash command and 19 (reply) for other interaction responses.
func (s *state) interactionMessageType(m *message) int {
	if in, ok := s.interactions[m.interaction]; ok && in.kind == kindCommand {
		return 20
	}
	return 19
}

// renderAuthor is the message's author. A webhook message's author is the
// webhook, under the username and avatar the execute request gave, if any.
func (s *state) renderAuthor(m *message) map[string]any {
	if m.webhookID == "" || m.webhookID == m.applicationID {
		return s.renderUser(m.authorID)
	}
	name := m.username
	if w, ok := s.webhooks[m.webhookID]; ok && name == "" {
		name = w.name
	}
	if name == "" {
		name = "webhook"
	}
	return map[string]any{
		"id": m.webhookID, "username": name, "avatar": nilIfEmpty(m.avatar), "discriminator": "0000",
		"public_flags": 0, "flags": 0, "bot": true, "global_name": nil, "primary_guild": nil,
	}
}

// messageEvent is the MESSAGE_CREATE or MESSAGE_UPDATE payload: the message
// with its guild_id, which DMs lack.
func (s *state) messageEvent(m *message) map[string]any {
	return withGuild(s.renderMessage(m), m.guildID)
}

func nonNil(v []any) []any {
	if v == nil {
		return []any{}
	}
	return v
}

func (s *state) renderGuild(g *guild) map[string]any {
	roles := []any{}
	for _, r := range g.sortedRoles() {
		roles = append(roles, renderRole(r))
	}
	emojis := []any{}
	ids := slices.SortedFunc(maps.Keys(g.emojis), compareSnowflakes)
	for _, id := range ids {
		emojis = append(emojis, map[string]any{
			"id": id, "name": g.emojis[id], "roles": []any{}, "require_colons": true,
			"managed": false, "animated": false, "available": true,
		})
	}
	return map[string]any{
		"id": g.id, "name": g.name, "icon": nil, "description": nil, "home_header": nil,
		"splash": nil, "discovery_splash": nil, "features": []any{}, "banner": nil,
		"owner_id": g.ownerID, "application_id": nil, "region": "deprecated",
		"afk_channel_id": nil, "afk_timeout": 300, "system_channel_id": nil,
		"system_channel_flags": 0, "widget_enabled": false, "widget_channel_id": nil,
		"verification_level": 0, "roles": roles, "default_message_notifications": 0,
		"mfa_level": 0, "explicit_content_filter": 0, "max_presences": nil,
		"max_members": 500000, "max_stage_video_channel_users": 50,
		"max_video_channel_users": 25, "vanity_url_code": nil, "premium_tier": g.premiumTier,
		"premium_subscription_count": 0, "preferred_locale": "en-US",
		"rules_channel_id": nil, "safety_alerts_channel_id": nil,
		"public_updates_channel_id": nil, "premium_progress_bar_enabled": false,
		"nsfw": false, "nsfw_level": 0, "emojis": emojis, "stickers": []any{},
		"incidents_data": nil,
	}
}

// guildCreate is a GUILD_CREATE as the sessions with the Guild Presences
// intent receive it, and as those without it do.
type guildCreate struct{ full, withoutPresences map[string]any }

func (s *state) renderGuildCreate(g *guild) *guildCreate {
	return &guildCreate{s.renderGatewayGuild(g, true), s.renderGatewayGuild(g, false)}
}

// renderGatewayGuild is the GUILD_CREATE payload: the guild with its
// channels, threads and members. Without the Guild Presences intent the
// members are only the bot and those in voice channels, of whom the
// simulator has none ("Guild Create": "If your bot does not have the
// GUILD_PRESENCES Gateway Intent ... members and presences returned in
// this event will only contain your bot and users in voice channels").
func (s *state) renderGatewayGuild(g *guild, presences bool) map[string]any {
	out := s.renderGuild(g)
	channels, threads := []any{}, []any{}
	for _, id := range g.channels {
		channels = append(channels, s.renderChannel(s.channels[id]))
	}
	for _, c := range s.channels {
		if c.guildID == g.id && c.isThread() && !c.archived {
			threads = append(threads, s.renderChannel(c))
		}
	}
	members := []any{}
	for _, m := range g.members {
		if presences || m.userID == s.botID {
			members = append(members, s.renderMember(m))
		}
	}
	out["channels"] = channels
	out["threads"] = threads
	out["members"] = members
	out["member_count"] = len(g.members)
	out["joined_at"] = timestamp(g.members[s.botID].joinedAt)
	out["large"] = false
	out["unavailable"] = false
	return out
}

// renderWebhook is an incoming webhook. withUser adds its creator, which
// Discord leaves out when the webhook is fetched with its token.
func (s *state) renderWebhook(w *webhook, withUser bool) map[string]any {
	out := map[string]any{
		"id": w.id, "type": 1, "name": w.name, "avatar": nil, "channel_id": w.channelID,
		"guild_id": w.guildID, "application_id": nil, "token": w.token,
	}
	if withUser {
		out["user"] = s.renderUser(w.creatorID)
	}
	return out
}

func renderCommand(c *command, appID string) map[string]any {
	out := copyJSON(c.body).(map[string]any)
	out["id"] = c.id
	out["application_id"] = appID
	out["version"] = c.version
	out["type"] = c.typ
	out["name"] = c.name
	out["description"] = c.description
	if _, ok := out["default_member_permissions"]; !ok {
		out["default_member_permissions"] = nil
	}
	if c.guildID != "" {
		out["guild_id"] = c.guildID
	}
	return out
}

// copyJSON deep-copies a decoded JSON value, so an answer can be changed
// without changing what is stored.
func copyJSON(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = copyJSON(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = copyJSON(x)
		}
		return out
	}
	return v
}
