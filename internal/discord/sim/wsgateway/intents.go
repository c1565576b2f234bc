package wsgateway

import (
	"encoding/json"
	"slices"
)

// Gateway intents (Discord's "List of Intents").
const (
	intentGuilds                 int64 = 1 << 0
	intentGuildMembers           int64 = 1 << 1
	intentGuildModeration        int64 = 1 << 2
	intentGuildExpressions       int64 = 1 << 3
	intentGuildIntegrations      int64 = 1 << 4
	intentGuildWebhooks          int64 = 1 << 5
	intentGuildInvites           int64 = 1 << 6
	intentGuildVoiceStates       int64 = 1 << 7
	intentGuildPresences         int64 = 1 << 8
	intentGuildMessages          int64 = 1 << 9
	intentGuildMessageReactions  int64 = 1 << 10
	intentGuildMessageTyping     int64 = 1 << 11
	intentDirectMessages         int64 = 1 << 12
	intentDirectMessageReactions int64 = 1 << 13
	intentDirectMessageTyping    int64 = 1 << 14
	intentMessageContent         int64 = 1 << 15
	intentGuildScheduledEvents   int64 = 1 << 16
	intentAutoModConfiguration   int64 = 1 << 20
	intentAutoModExecution       int64 = 1 << 21
	intentGuildMessagePolls      int64 = 1 << 24
	intentDirectMessagePolls     int64 = 1 << 25

	// knownIntents is every bit Discord defines; any other bit closes the
	// connection with 4013.
	knownIntents = 1<<17 - 1 | intentAutoModConfiguration | intentAutoModExecution |
		intentGuildMessagePolls | intentDirectMessagePolls
)

// requiredIntents returns the intents of which a session needs at least one
// to receive eventType, or 0 when the event is sent regardless of intents.
// inGuild distinguishes guild events from direct-message ones, which several
// event types are gated on differently.
func requiredIntents(eventType string, inGuild bool) int64 {
	pick := func(guild, dm int64) int64 {
		if inGuild {
			return guild
		}
		return dm
	}
	switch eventType {
	case "GUILD_CREATE", "GUILD_UPDATE", "GUILD_DELETE",
		"GUILD_ROLE_CREATE", "GUILD_ROLE_UPDATE", "GUILD_ROLE_DELETE",
		"CHANNEL_CREATE", "CHANNEL_UPDATE", "CHANNEL_DELETE",
		"THREAD_CREATE", "THREAD_UPDATE", "THREAD_DELETE", "THREAD_LIST_SYNC", "THREAD_MEMBER_UPDATE",
		"STAGE_INSTANCE_CREATE", "STAGE_INSTANCE_UPDATE", "STAGE_INSTANCE_DELETE",
		"VOICE_CHANNEL_STATUS_UPDATE", "VOICE_CHANNEL_START_TIME_UPDATE":
		return intentGuilds
	case "CHANNEL_PINS_UPDATE":
		return pick(intentGuilds, intentDirectMessages)
	case "THREAD_MEMBERS_UPDATE":
		// With GUILDS alone, only when the bot itself was added or
		// removed (reachesSelf).
		return intentGuildMembers
	case "GUILD_MEMBER_ADD", "GUILD_MEMBER_UPDATE", "GUILD_MEMBER_REMOVE":
		// "Guild Member Update is sent for current-user updates
		// regardless of whether the GUILD_MEMBERS intent is set":
		// dispatch lets the bot's own through (reachesSelf).
		return intentGuildMembers
	case "GUILD_AUDIT_LOG_ENTRY_CREATE", "GUILD_BAN_ADD", "GUILD_BAN_REMOVE":
		return intentGuildModeration
	case "GUILD_EMOJIS_UPDATE", "GUILD_STICKERS_UPDATE", "GUILD_SOUNDBOARD_SOUND_CREATE",
		"GUILD_SOUNDBOARD_SOUND_UPDATE", "GUILD_SOUNDBOARD_SOUND_DELETE", "GUILD_SOUNDBOARD_SOUNDS_UPDATE":
		return intentGuildExpressions
	case "GUILD_INTEGRATIONS_UPDATE", "INTEGRATION_CREATE", "INTEGRATION_UPDATE", "INTEGRATION_DELETE":
		return intentGuildIntegrations
	case "WEBHOOKS_UPDATE":
		return intentGuildWebhooks
	case "INVITE_CREATE", "INVITE_DELETE":
		return intentGuildInvites
	case "VOICE_CHANNEL_EFFECT_SEND", "VOICE_STATE_UPDATE":
		return intentGuildVoiceStates
	case "PRESENCE_UPDATE":
		return intentGuildPresences
	case "MESSAGE_CREATE", "MESSAGE_UPDATE", "MESSAGE_DELETE":
		return pick(intentGuildMessages, intentDirectMessages)
	case "MESSAGE_DELETE_BULK":
		return intentGuildMessages
	case "MESSAGE_REACTION_ADD", "MESSAGE_REACTION_REMOVE",
		"MESSAGE_REACTION_REMOVE_ALL", "MESSAGE_REACTION_REMOVE_EMOJI":
		return pick(intentGuildMessageReactions, intentDirectMessageReactions)
	case "TYPING_START":
		return pick(intentGuildMessageTyping, intentDirectMessageTyping)
	case "GUILD_SCHEDULED_EVENT_CREATE", "GUILD_SCHEDULED_EVENT_UPDATE", "GUILD_SCHEDULED_EVENT_DELETE",
		"GUILD_SCHEDULED_EVENT_USER_ADD", "GUILD_SCHEDULED_EVENT_USER_REMOVE":
		return intentGuildScheduledEvents
	case "AUTO_MODERATION_RULE_CREATE", "AUTO_MODERATION_RULE_UPDATE", "AUTO_MODERATION_RULE_DELETE":
		return intentAutoModConfiguration
	case "AUTO_MODERATION_ACTION_EXECUTION":
		return intentAutoModExecution
	case "MESSAGE_POLL_VOTE_ADD", "MESSAGE_POLL_VOTE_REMOVE":
		return pick(intentGuildMessagePolls, intentDirectMessagePolls)
	}
	return 0
}

// wants reports whether a session identified with intents receives eventType.
func wants(intents int64, eventType string, inGuild bool) bool {
	need := requiredIntents(eventType, inGuild)
	return need == 0 || intents&need != 0
}

// concerned lists the users an event is about, for the events that reach
// a session without their intent when the bot is one of them
// (reachesSelf); nil for any other event.
func concerned(eventType string, payload []byte) []string {
	switch eventType {
	case "GUILD_MEMBER_UPDATE":
		var m struct {
			User struct {
				ID string `json:"id"`
			} `json:"user"`
		}
		json.Unmarshal(payload, &m)
		return []string{m.User.ID}
	case "THREAD_MEMBERS_UPDATE":
		var m struct {
			Added []struct {
				UserID string `json:"user_id"`
			} `json:"added_members"`
			Removed []string `json:"removed_member_ids"`
		}
		json.Unmarshal(payload, &m)
		ids := m.Removed
		for _, a := range m.Added {
			ids = append(ids, a.UserID)
		}
		return ids
	}
	return nil
}

// reachesSelf reports whether an event a session's intents do not ask for
// reaches it all the same because it is about the bot (userID, which is
// never empty): "Guild Member Update is sent for current-user updates
// regardless of whether the GUILD_MEMBERS intent is set", and "If the
// current user does not have the GUILD_MEMBERS Gateway Intent, then
// [Thread Members Update] will only be sent if the current user was added
// to or removed from the thread" (to a session with GUILDS).
func reachesSelf(intents int64, eventType string, about []string, userID string) bool {
	if !slices.Contains(about, userID) {
		return false
	}
	return eventType != "THREAD_MEMBERS_UPDATE" || intents&intentGuilds != 0
}
