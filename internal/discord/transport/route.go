package transport

import (
	"strings"
)

// Route identifies a request for rate limiting: the method, the path
// template and the value of its major parameter, the top-level resource
// Discord keys buckets on (channel, guild, webhook id+token, interaction).
type Route struct {
	Method   string
	Template string // "/channels/{channel_id}/messages/{message_id}"
	Major    string // "123" for the channel above; "" when the route has none
	// Exempt routes — interaction endpoints: callbacks, follow-ups and
	// @original — do not count against the global limit.
	Exempt bool
	// Webhook is the webhook id of an ordinary webhook route, so a 404 can
	// mark that webhook dead.
	Webhook string
}

// Key names the route without its major value. It is what logs and metrics
// show: it never holds an id or a token.
func (r Route) Key() string { return r.Method + " " + r.Template }

// TokenAuth reports whether a token in the path authenticates the route:
// webhook calls made with the webhook's token, and interaction callbacks,
// follow-ups and @original edits made with the interaction token. Discord
// authenticates these by that token, whatever Authorization header a
// client such as discordgo adds, so a 401 there says nothing about the bot
// token.
func (r Route) TokenAuth() bool {
	return strings.Contains(r.Template, "{webhook_token}") || strings.Contains(r.Template, "{interaction_token}")
}

// ParseRoute derives the route from a REST path below the API version
// prefix ("/channels/1/messages/2"), as sent on the wire: an escaped
// slash stays inside its segment. appID tells an application's own
// webhook (interaction follow-ups, exempt from the global limit) from an
// ordinary one. Ids, tokens and any word Discord's paths do not have
// become template parameters, so the number of route keys stays bounded
// whatever passes through.
func ParseRoute(method, path, appID string) Route {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	r := Route{Method: method}
	tpl := make([]string, len(segs))
	for i, s := range segs {
		prev := ""
		if i > 0 {
			prev = segs[i-1]
		}
		switch {
		case i == 1 && (prev == "channels" || prev == "guilds"):
			tpl[i] = "{" + strings.TrimSuffix(prev, "s") + "_id}"
			r.Major = s
		case i == 1 && prev == "webhooks" && s == appID:
			tpl[i] = "{application_id}"
			r.Exempt = true
		case i == 1 && prev == "webhooks":
			tpl[i] = "{webhook_id}"
			r.Major, r.Webhook = s, s
		case i == 2 && segs[0] == "webhooks" && r.Exempt:
			tpl[i] = "{interaction_token}"
			r.Major = s
		case i == 2 && segs[0] == "webhooks":
			// Calls authenticated by a webhook's token carry no bot token:
			// Discord counts them on the global limit of the caller's IP
			// ("If no authorization header is provided, then the limit is
			// applied to the IP address"). herald counts them within the
			// bot's, so both limits (50/s each) hold together and a global
			// 429 on one slows it like any other.
			tpl[i] = "{webhook_token}"
			r.Major += "/" + s
		case i == 1 && prev == "interactions":
			tpl[i] = "{interaction_id}"
		case i == 2 && segs[0] == "interactions":
			tpl[i] = "{interaction_token}"
			r.Major = s
			r.Exempt = true
		case prev == "reactions":
			tpl[i] = "{emoji}"
		case isID(s):
			tpl[i] = "{" + paramName(prev) + "}"
		case knownSegments[s]:
			tpl[i] = s
		default:
			tpl[i] = "{segment}"
		}
	}
	r.Template = "/" + strings.Join(tpl, "/")
	return r
}

func paramName(prev string) string {
	switch prev {
	case "messages":
		return "message_id"
	case "roles":
		return "role_id"
	case "members", "thread-members", "users", "bans":
		return "user_id"
	case "commands":
		return "command_id"
	case "applications":
		return "application_id"
	case "emojis":
		return "emoji_id"
	case "guilds":
		return "guild_id"
	case "channels":
		return "channel_id"
	case "overwrites", "permissions":
		return "overwrite_id"
	default:
		return "id"
	}
}

func isID(s string) bool {
	if s == "" || len(s) > 20 {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
