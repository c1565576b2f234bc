package sim

import (
	"strings"
	"time"
)

type handlerFunc func(s *Server, rq *request) (any, *apiError)

// route is one REST endpoint with its rate-limit identity.
type route struct {
	method   string
	template string
	segs     []string
	group    string // routes with the same group share one bucket hash
	major    string // top-level resource param the bucket is keyed on
	limit    Limit
	exempt   bool // an interaction endpoint: not counted against any global limit
	noAuth   bool // authenticated by the token in the path
	handle   handlerFunc
	// shared, when set, is a per-resource limit shared with every other
	// client (scope "shared"); sharedKey names that resource.
	shared    Limit
	sharedKey func(st *state, p map[string]string) string
	// sub, when set, names a stricter limit that only some requests of
	// the route count against (channel renames), with its own bucket.
	sub func(rq *request) (group string, l Limit, ok bool)
}

// Key is the route's name in options, faults and the request log:
// "POST /channels/{channel_id}/messages".
func (rt *route) key() string { return rt.method + " " + rt.template }

func per(n int, d time.Duration) Limit { return Limit{Requests: n, Window: d} }

// Major parameters: the top-level resources Discord keys buckets on.
const (
	majorNone        = ""
	majorChannel     = "channel_id"
	majorGuild       = "guild_id"
	majorWebhook     = "webhook"
	majorInteraction = "interaction"
)

// routeTable lists every endpoint with defaults close to the limits Discord
// is observed to send. Routes that share a group share a bucket.
func routeTable() []*route {
	sec := time.Second
	rs := []*route{
		{method: "GET", template: "/gateway", group: "gateway", limit: per(5, 5*sec), noAuth: true, handle: getGateway},
		{method: "GET", template: "/gateway/bot", group: "gateway-bot", limit: per(5, 5*sec), handle: getGatewayBot},
		{method: "GET", template: "/users/@me", group: "users-me", limit: per(5, 5*sec), handle: getCurrentUser},
		{method: "POST", template: "/users/@me/channels", group: "dm-create", limit: per(5, 5*sec), handle: createDM},
		{method: "GET", template: "/applications/@me", group: "application-me", limit: per(5, 5*sec), handle: getApplication},
		{method: "GET", template: "/oauth2/applications/@me", group: "oauth2-application-me", limit: per(5, 5*sec), handle: getApplication},

		{method: "GET", template: "/guilds/{guild_id}", group: "guild-get", major: majorGuild, limit: per(5, 5*sec), handle: getGuild},
		{method: "GET", template: "/guilds/{guild_id}/roles", group: "guild-roles-get", major: majorGuild, limit: per(5, 5*sec), handle: listRoles},
		{method: "POST", template: "/guilds/{guild_id}/roles", group: "guild-role-create", major: majorGuild, limit: per(250, 48*time.Hour), handle: createRole},
		{method: "PATCH", template: "/guilds/{guild_id}/roles/{role_id}", group: "guild-role-modify", major: majorGuild, limit: per(10, 10*sec), handle: modifyRole},
		{method: "DELETE", template: "/guilds/{guild_id}/roles/{role_id}", group: "guild-role-modify", major: majorGuild, limit: per(10, 10*sec), handle: deleteRole},
		{method: "GET", template: "/guilds/{guild_id}/members", group: "guild-members-list", major: majorGuild, limit: per(10, 10*sec), handle: listMembers},
		{method: "GET", template: "/guilds/{guild_id}/members/search", group: "guild-members-search", major: majorGuild, limit: per(10, 10*sec), handle: searchMembers},
		{method: "GET", template: "/guilds/{guild_id}/members/{user_id}", group: "guild-member-get", major: majorGuild, limit: per(5, sec), handle: getMember},
		{method: "PATCH", template: "/guilds/{guild_id}/members/{user_id}", group: "guild-member-modify", major: majorGuild, limit: per(10, 10*sec), handle: modifyMember},
		{method: "DELETE", template: "/guilds/{guild_id}/members/{user_id}", group: "guild-member-kick", major: majorGuild, limit: per(5, 5*sec), handle: kickMember},
		{method: "PUT", template: "/guilds/{guild_id}/members/{user_id}/roles/{role_id}", group: "guild-member-role", major: majorGuild, limit: per(10, 10*sec), handle: addMemberRole},
		{method: "DELETE", template: "/guilds/{guild_id}/members/{user_id}/roles/{role_id}", group: "guild-member-role", major: majorGuild, limit: per(10, 10*sec), handle: removeMemberRole},
		{method: "GET", template: "/guilds/{guild_id}/channels", group: "guild-channels-get", major: majorGuild, limit: per(5, 5*sec), handle: listChannels},
		{method: "POST", template: "/guilds/{guild_id}/channels", group: "guild-channel-create", major: majorGuild, limit: per(5, 10*sec), handle: createChannel},
		{method: "GET", template: "/guilds/{guild_id}/threads/active", group: "guild-threads-active", major: majorGuild, limit: per(5, 5*sec), handle: listActiveThreads},

		{method: "GET", template: "/channels/{channel_id}", group: "channel-get", major: majorChannel, limit: per(5, 5*sec), handle: getChannel},
		{method: "PATCH", template: "/channels/{channel_id}", group: "channel-modify", major: majorChannel, limit: per(10, 15*sec), handle: modifyChannel, sub: renameLimit},
		{method: "DELETE", template: "/channels/{channel_id}", group: "channel-delete", major: majorChannel, limit: per(5, 5*sec), handle: deleteChannel},
		{method: "GET", template: "/channels/{channel_id}/messages", group: "messages-list", major: majorChannel, limit: per(5, 5*sec), handle: listMessages},
		{method: "POST", template: "/channels/{channel_id}/messages", group: "message-create", major: majorChannel, limit: per(5, 5*sec), handle: createMessage},
		{method: "GET", template: "/channels/{channel_id}/messages/{message_id}", group: "message-get", major: majorChannel, limit: per(5, 5*sec), handle: getMessage},
		{method: "PATCH", template: "/channels/{channel_id}/messages/{message_id}", group: "message-edit", major: majorChannel, limit: per(5, 5*sec), handle: editMessage},
		{method: "DELETE", template: "/channels/{channel_id}/messages/{message_id}", group: "message-delete", major: majorChannel, limit: per(5, sec), handle: deleteMessage},
		{method: "POST", template: "/channels/{channel_id}/messages/bulk-delete", group: "messages-bulk-delete", major: majorChannel, limit: per(1, sec), handle: bulkDelete},
		{method: "GET", template: "/channels/{channel_id}/messages/pins", group: "pins-get", major: majorChannel, limit: per(5, 5*sec), handle: listPins},
		{method: "PUT", template: "/channels/{channel_id}/messages/pins/{message_id}", group: "pin-modify", major: majorChannel, limit: per(5, 5*sec), handle: pinMessage},
		{method: "DELETE", template: "/channels/{channel_id}/messages/pins/{message_id}", group: "pin-modify", major: majorChannel, limit: per(5, 5*sec), handle: unpinMessage},
		// Reactions: Discord allows one change about every 250 ms per channel.
		{method: "PUT", template: "/channels/{channel_id}/messages/{message_id}/reactions/{emoji_name}/@me", group: "reaction-modify", major: majorChannel, limit: per(1, 250*time.Millisecond), handle: createReaction},
		{method: "DELETE", template: "/channels/{channel_id}/messages/{message_id}/reactions/{emoji_name}/@me", group: "reaction-modify", major: majorChannel, limit: per(1, 250*time.Millisecond), handle: deleteOwnReaction},
		{method: "DELETE", template: "/channels/{channel_id}/messages/{message_id}/reactions/{emoji_name}/{user_id}", group: "reaction-modify", major: majorChannel, limit: per(1, 250*time.Millisecond), handle: deleteUserReaction},
		{method: "GET", template: "/channels/{channel_id}/messages/{message_id}/reactions/{emoji_name}", group: "reactions-get", major: majorChannel, limit: per(5, 5*sec), handle: listReactions},
		{method: "DELETE", template: "/channels/{channel_id}/messages/{message_id}/reactions/{emoji_name}", group: "reactions-clear", major: majorChannel, limit: per(1, 250*time.Millisecond), handle: deleteEmojiReactions},
		{method: "DELETE", template: "/channels/{channel_id}/messages/{message_id}/reactions", group: "reactions-clear", major: majorChannel, limit: per(1, 250*time.Millisecond), handle: deleteAllReactions},
		{method: "PUT", template: "/channels/{channel_id}/permissions/{overwrite_id}", group: "channel-permissions", major: majorChannel, limit: per(5, 5*sec), handle: putOverwrite},
		{method: "DELETE", template: "/channels/{channel_id}/permissions/{overwrite_id}", group: "channel-permissions", major: majorChannel, limit: per(5, 5*sec), handle: deleteOverwrite},
		{method: "POST", template: "/channels/{channel_id}/threads", group: "thread-create", major: majorChannel, limit: per(5, 5*sec), handle: createThread},
		{method: "POST", template: "/channels/{channel_id}/messages/{message_id}/threads", group: "thread-create", major: majorChannel, limit: per(5, 5*sec), handle: createThreadFromMessage},
		{method: "PUT", template: "/channels/{channel_id}/thread-members/{user_id}", group: "thread-member", major: majorChannel, limit: per(5, 5*sec), handle: addThreadMember},
		{method: "DELETE", template: "/channels/{channel_id}/thread-members/{user_id}", group: "thread-member", major: majorChannel, limit: per(5, 5*sec), handle: removeThreadMember},
		{method: "GET", template: "/channels/{channel_id}/webhooks", group: "channel-webhooks-get", major: majorChannel, limit: per(5, 5*sec), handle: listWebhooks},
		{method: "POST", template: "/channels/{channel_id}/webhooks", group: "webhook-create", major: majorChannel, limit: per(5, 5*sec), handle: createWebhook},

		{method: "GET", template: "/webhooks/{webhook_id}", group: "webhook-get", major: majorWebhook, limit: per(5, 5*sec), handle: getWebhook},
		{method: "PATCH", template: "/webhooks/{webhook_id}", group: "webhook-modify", major: majorWebhook, limit: per(5, 5*sec), handle: modifyWebhook},
		{method: "DELETE", template: "/webhooks/{webhook_id}", group: "webhook-delete", major: majorWebhook, limit: per(5, 5*sec), handle: deleteWebhook},
		{method: "GET", template: "/webhooks/{webhook_id}/{webhook_token}", group: "webhook-get-token", major: majorWebhook, limit: per(5, 5*sec), noAuth: true, handle: getWebhookWithToken},
		{method: "POST", template: "/webhooks/{webhook_id}/{webhook_token}", group: "webhook-execute", major: majorWebhook, limit: per(5, 2*sec), noAuth: true, handle: executeWebhook,
			shared: per(30, time.Minute), sharedKey: webhookChannel},
		{method: "POST", template: "/webhooks/{webhook_id}/{webhook_token}/slack", group: "webhook-execute", major: majorWebhook, limit: per(5, 2*sec), noAuth: true, handle: executeSlackWebhook,
			shared: per(30, time.Minute), sharedKey: webhookChannel},
		{method: "POST", template: "/webhooks/{webhook_id}/{webhook_token}/github", group: "webhook-execute", major: majorWebhook, limit: per(5, 2*sec), noAuth: true, handle: executeGitHubWebhook,
			shared: per(30, time.Minute), sharedKey: webhookChannel},
		{method: "GET", template: "/webhooks/{webhook_id}/{webhook_token}/messages/@original", group: "webhook-message", major: majorWebhook, limit: per(5, 2*sec), noAuth: true, handle: getWebhookMessage},
		{method: "PATCH", template: "/webhooks/{webhook_id}/{webhook_token}/messages/@original", group: "webhook-message", major: majorWebhook, limit: per(5, 2*sec), noAuth: true, handle: editWebhookMessage},
		{method: "DELETE", template: "/webhooks/{webhook_id}/{webhook_token}/messages/@original", group: "webhook-message", major: majorWebhook, limit: per(5, 2*sec), noAuth: true, handle: deleteWebhookMessage},
		{method: "GET", template: "/webhooks/{webhook_id}/{webhook_token}/messages/{message_id}", group: "webhook-message", major: majorWebhook, limit: per(5, 2*sec), noAuth: true, handle: getWebhookMessage},
		{method: "PATCH", template: "/webhooks/{webhook_id}/{webhook_token}/messages/{message_id}", group: "webhook-message", major: majorWebhook, limit: per(5, 2*sec), noAuth: true, handle: editWebhookMessage},
		{method: "DELETE", template: "/webhooks/{webhook_id}/{webhook_token}/messages/{message_id}", group: "webhook-message", major: majorWebhook, limit: per(5, 2*sec), noAuth: true, handle: deleteWebhookMessage},
		{method: "POST", template: "/interactions/{interaction_id}/{interaction_token}/callback", group: "interaction-callback", major: majorInteraction, limit: per(5, 5*sec), exempt: true, noAuth: true, handle: interactionCallback},

		{method: "GET", template: "/applications/{application_id}/commands", group: "commands-get", limit: per(5, 5*sec), handle: listGlobalCommands},
		{method: "PUT", template: "/applications/{application_id}/commands", group: "commands-overwrite", limit: per(2, 20*sec), handle: overwriteGlobalCommands},
		{method: "GET", template: "/applications/{application_id}/guilds/{guild_id}/commands", group: "guild-commands-get", major: majorGuild, limit: per(5, 5*sec), handle: listGuildCommands},
		{method: "PUT", template: "/applications/{application_id}/guilds/{guild_id}/commands", group: "guild-commands-overwrite", major: majorGuild, limit: per(2, 20*sec), handle: overwriteGuildCommands},
	}
	for _, rt := range rs {
		rt.segs = strings.Split(strings.Trim(rt.template, "/"), "/")
	}
	return rs
}

// match finds the route for a method and path (without the /api/vN
// prefix). Literal segments beat parameters, so "@original" and "@me" win
// over "{message_id}". It reports whether the path exists for another
// method, to tell 405 from 404.
func match(routes []*route, method, path string) (rt *route, params map[string]string, pathExists bool) {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	best := -1
	for _, cand := range routes {
		if len(cand.segs) != len(segs) {
			continue
		}
		literals, ok := 0, true
		for i, s := range cand.segs {
			if strings.HasPrefix(s, "{") {
				if segs[i] == "" {
					ok = false
					break
				}
				continue
			}
			if s != segs[i] {
				ok = false
				break
			}
			literals++
		}
		if !ok {
			continue
		}
		pathExists = true
		if cand.method == method && literals > best {
			rt, best = cand, literals
		}
	}
	if rt == nil {
		return nil, nil, pathExists
	}
	params = map[string]string{}
	for i, s := range rt.segs {
		if strings.HasPrefix(s, "{") {
			params[strings.Trim(s, "{}")] = segs[i]
		}
	}
	return rt, params, true
}
