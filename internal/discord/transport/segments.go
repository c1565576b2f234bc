package transport

// knownSegments are the fixed words of Discord's REST paths (every
// literal segment of the paths in Discord's OpenAPI spec; route_test
// checks the list against it). A path segment that is neither one of
// them nor an id becomes "{segment}" in the route: route keys name
// buckets, metric labels and log fields, so no text from a path — which a
// proxy caller chooses — may reach them.
var knownSegments = map[string]bool{
	"@me": true, "@original": true, "active": true, "activity-instances": true, "answers": true,
	"applications": true, "archived": true, "attachment": true, "audit-logs": true, "auto-moderation": true,
	"bans": true, "bot": true, "bulk": true, "bulk-ban": true, "bulk-delete": true, "callback": true,
	"channel-linking": true, "channels": true, "commands": true, "connections": true, "consume": true,
	"counts": true, "crosspost": true, "dms": true, "emojis": true, "entitlements": true, "exceptions": true,
	"expire": true, "followers": true, "gateway": true, "github": true, "guilds": true,
	"incident-actions": true, "integrations": true, "interactions": true, "invites": true, "job-status": true,
	"keys": true, "lobbies": true, "member": true, "member-counts": true, "members": true, "messages": true,
	"metadata": true, "moderation-metadata": true, "new-member-welcome": true, "oauth2": true,
	"onboarding": true, "partner-sdk": true, "permissions": true, "pins": true, "polls": true, "preview": true,
	"private": true, "provisional-accounts": true, "prune": true, "public": true, "reactions": true,
	"recipients": true, "regions": true, "requests": true, "role-connection": true, "role-connections": true,
	"roles": true, "rules": true, "scheduled-events": true, "search": true, "send-soundboard-sound": true,
	"skus": true, "slack": true, "soundboard-default-sounds": true, "soundboard-sounds": true,
	"stage-instances": true, "sticker-packs": true, "stickers": true, "subscriptions": true,
	"target-users": true, "templates": true, "thread-members": true, "threads": true, "token": true,
	"typing": true, "unmerge": true, "userinfo": true, "users": true, "vanity-url": true, "voice": true,
	"voice-states": true, "voice-status": true, "webhooks": true, "welcome-screen": true, "widget": true,
	"widget.json": true, "widget.png": true,
}
