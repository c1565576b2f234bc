package sim

import (
	"slices"
	"time"
)

// Channel types the simulator models (Discord's channel type enum).
const (
	channelText          = 0
	channelDM            = 1
	channelVoice         = 2
	channelCategory      = 4
	channelAnnouncement  = 5
	channelPublicThread  = 11
	channelPrivateThread = 12
	channelForum         = 15
)

// Discord's caps that the simulator enforces.
const (
	maxGuildChannels    = 500
	maxCategoryChildren = 50
	maxChannelWebhooks  = 15
	maxGuildRoles       = 250
	maxChannelPins      = 250
	maxReactionEmojis   = 20
)

type user struct {
	id       string
	username string
	bot      bool
	// dmsClosed refuses direct messages, as a member who turned off DMs
	// from server members does: sending one answers 50007.
	dmsClosed bool
}

type role struct {
	id          string
	name        string
	permissions uint64
	position    int
	color       int
	hoist       bool
	mentionable bool
	managed     bool
}

type member struct {
	userID        string
	roles         []string
	nick          *string
	joinedAt      time.Time
	timeoutExpiry *time.Time // communication_disabled_until
}

type overwrite struct {
	id    string
	typ   int // 0 role, 1 member
	allow uint64
	deny  uint64
}

type channel struct {
	id               string
	guildID          string
	name             string
	typ              int
	parentID         string
	position         int
	topic            *string
	nsfw             bool
	rateLimitPerUser int
	overwrites       []overwrite
	messages         []*message // ascending by id
	lastMessageID    string
	lastPinAt        time.Time
	recipientID      string // the other user of a DM channel

	// Thread fields.
	ownerID       string
	archived      bool
	locked        bool
	invitable     bool
	autoArchive   int
	createdAt     time.Time
	archivedAt    time.Time
	activeAt      time.Time // last activity, which its archive counts from
	threadMembers map[string]time.Time
	messageCount  int
}

func (c *channel) isThread() bool {
	return c.typ == channelPublicThread || c.typ == channelPrivateThread || c.typ == 10
}

type attachment struct {
	id          string
	filename    string
	size        int
	contentType string
	description string
}

type message struct {
	id            string
	typ           int // 0 default; 6 the system message of a pin
	channelID     string
	guildID       string
	authorID      string
	webhookID     string
	applicationID string
	content       string
	embeds        []any
	components    []any
	attachments   []attachment
	flags         int
	tts           bool
	nonce         string
	timestamp     time.Time
	editedAt      *time.Time
	interaction   string // interaction id for responses and follow-ups
	pinnedAt      time.Time
	reactions     []*reaction
	reference     string // the message a system message refers to
	// username and avatar override a webhook's own for one message.
	username string
	avatar   string
}

// reaction is one emoji on a message and who reacted with it, in order.
type reaction struct {
	emoji emoji
	users []string
}

// emoji is a unicode emoji (id empty) or a custom one.
type emoji struct {
	id   string
	name string
}

type webhook struct {
	id        string
	token     string
	name      string
	channelID string
	guildID   string
	creatorID string
}

type command struct {
	id          string
	guildID     string
	version     string
	body        map[string]any
	name        string
	description string
	typ         int
}

type guild struct {
	id       string
	name     string
	ownerID  string
	roles    map[string]*role
	members  map[string]*member
	channels []string // creation order
	commands []*command
	emojis   map[string]string // custom emoji id → name
	// premiumTier is the Server Boost level, 0 to 3.
	premiumTier int
}

func (g *guild) everyone() *role { return g.roles[g.id] }

// sortedRoles returns the guild's roles lowest first, as Discord lists them.
func (g *guild) sortedRoles() []*role {
	out := make([]*role, 0, len(g.roles))
	for _, r := range g.roles {
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b *role) int {
		if roleAbove(a, b) {
			return 1
		}
		if roleAbove(b, a) {
			return -1
		}
		return 0
	})
	return out
}

// roleAbove reports whether a sits higher than b in the hierarchy: higher
// position, and on equal positions the older role (smaller id) wins.
func roleAbove(a, b *role) bool {
	if a.position != b.position {
		return a.position > b.position
	}
	return snowflakeLess(a.id, b.id)
}

type nonceKey struct {
	channelID string
	authorID  string
	nonce     string
}

type nonceEntry struct {
	messageID string
	at        time.Time
}

// state is the simulated Discord: every object, indexed the ways routes
// look them up. The server lock guards it.
type state struct {
	ids   snowflakes
	botID string
	// appID is the application's id. Applications made before Discord
	// gave bots their application's id have a bot user of another id, as
	// the simulator's does, so code that confuses the two fails here.
	appID string
	// appFlags are the application's flags as the Developer Portal sets
	// them (Discord's "Application Flags"): which privileged intents the
	// bot may use. A new application has none.
	appFlags     int64
	ownerID      string // the developer account that owns the application
	users        map[string]*user
	guilds       map[string]*guild
	guildOrder   []string
	channels     map[string]*channel
	messages     map[string]*message
	webhooks     map[string]*webhook
	interactions map[string]*interaction
	// byToken finds an interaction from its webhook routes' token: a
	// scan under the world's lock made every follow-up O(interactions).
	byToken    map[string]*interaction
	globalCmds []*command
	// cmdCreates are when commands were created, by scope (a guild's id,
	// "" for global), for the daily create limit (commands_limits.go).
	cmdCreates map[string][]time.Time
	nonces     map[nonceKey]nonceEntry
	dms        map[string]string // user id → DM channel id
	archives   archiveSchedule
}

func newState(now time.Time, botName string) *state {
	s := &state{
		users:        map[string]*user{},
		guilds:       map[string]*guild{},
		channels:     map[string]*channel{},
		messages:     map[string]*message{},
		webhooks:     map[string]*webhook{},
		interactions: map[string]*interaction{},
		byToken:      map[string]*interaction{},
		cmdCreates:   map[string][]time.Time{},
		nonces:       map[nonceKey]nonceEntry{},
		dms:          map[string]string{},
	}
	s.botID = s.ids.next(now)
	s.users[s.botID] = &user{id: s.botID, username: botName, bot: true}
	s.appID = s.ids.next(now)
	s.ownerID = s.ids.next(now)
	s.users[s.ownerID] = &user{id: s.ownerID, username: botName + "-developer"}
	return s
}

// guild looks up a guild the bot is in: one it has not been added to
// answers 403 Missing Access, as Discord does.
func (s *state) guild(id string) (*guild, *apiError) {
	g, ok := s.guilds[id]
	if !ok {
		return nil, errUnknown(codeUnknownGuild)
	}
	if g.members[s.botID] == nil {
		return nil, errMissingAccess
	}
	return g, nil
}

// channel looks up a channel; one of a guild the bot is not in answers
// 403 Missing Access.
func (s *state) channel(id string) (*channel, *apiError) {
	c, ok := s.channels[id]
	if !ok {
		return nil, errUnknown(codeUnknownChannel)
	}
	if g, ok := s.guilds[c.guildID]; ok && g.members[s.botID] == nil {
		return nil, errMissingAccess
	}
	return c, nil
}

func (s *state) message(c *channel, id string) (*message, *apiError) {
	m, ok := s.messages[id]
	if !ok || m.channelID != c.id {
		return nil, errUnknown(codeUnknownMessage)
	}
	return m, nil
}

func (s *state) addMessage(c *channel, m *message) {
	c.messages = append(c.messages, m)
	c.lastMessageID = m.id
	if c.isThread() {
		c.messageCount++
	}
	s.messages[m.id] = m
}

func (s *state) deleteMessage(m *message) {
	delete(s.messages, m.id)
	if c, ok := s.channels[m.channelID]; ok {
		c.messages = slices.DeleteFunc(c.messages, func(x *message) bool { return x.id == m.id })
	}
}

// deleteChannel removes a channel, its messages, its webhooks and, for a
// category, detaches its children (Discord keeps them, parentless).
func (s *state) deleteChannel(c *channel) (threads []*channel) {
	for _, m := range c.messages {
		delete(s.messages, m.id)
	}
	for id, w := range s.webhooks {
		if w.channelID == c.id {
			delete(s.webhooks, id)
		}
	}
	for _, other := range s.channels {
		if other.parentID != c.id {
			continue
		}
		if other.isThread() {
			threads = append(threads, other)
			continue
		}
		other.parentID = ""
	}
	for _, t := range threads {
		s.deleteChannel(t)
	}
	delete(s.channels, c.id)
	if g, ok := s.guilds[c.guildID]; ok {
		g.channels = slices.DeleteFunc(g.channels, func(id string) bool { return id == c.id })
	}
	return threads
}
