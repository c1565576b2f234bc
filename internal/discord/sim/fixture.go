package sim

import (
	"fmt"
	"strconv"
	"time"
)

// Fixture describes a guild to load: the body of POST /_sim/guilds.
// Roles name their permissions as a bitfield string; channels name their
// category by name; members name their roles.
type Fixture struct {
	Name     string           `json:"name"`
	Roles    []FixtureRole    `json:"roles"`
	Channels []FixtureChannel `json:"channels"`
	Members  []FixtureMember  `json:"members"`
	// BotRole configures the bot's own role; by default it sits above
	// every fixture role with the permissions herald needs.
	BotRole *FixtureRole `json:"bot_role,omitempty"`
	// Everyone sets @everyone's permissions; empty keeps Discord's defaults.
	Everyone string `json:"everyone_permissions,omitempty"`
	// Emojis names the guild's custom emojis, which reactions can use as
	// name:id.
	Emojis []string `json:"emojis,omitempty"`
	// Uninvited makes a server the bot has not been added to yet: no bot
	// member and no bot role until its owner follows an invite URL
	// (POST /_sim/oauth2/authorize). BotRole is then ignored.
	Uninvited bool `json:"uninvited,omitempty"`
	// PremiumTier is the guild's Server Boost level (0–3), which raises
	// the upload limit at levels 2 and 3.
	PremiumTier int `json:"premium_tier,omitempty"`
}

type FixtureRole struct {
	Name        string `json:"name"`
	Permissions string `json:"permissions"`
	Position    int    `json:"position"`
}

type FixtureChannel struct {
	Name   string `json:"name"`
	Type   int    `json:"type"`
	Parent string `json:"parent,omitempty"`
	Topic  string `json:"topic,omitempty"`
	// Overwrites are keyed by role name ("@everyone" for the guild's
	// default role, the bot role's name for the bot role).
	Overwrites []FixtureOverwrite `json:"overwrites,omitempty"`
}

type FixtureOverwrite struct {
	Role  string `json:"role"`
	Allow string `json:"allow,omitempty"`
	Deny  string `json:"deny,omitempty"`
}

type FixtureMember struct {
	Username string   `json:"username"`
	Roles    []string `json:"roles"`
	// DMsClosed makes the member refuse direct messages: the bot can open
	// the DM channel, but sending in it answers 403 50007.
	DMsClosed bool `json:"dms_closed,omitempty"`
}

// FixtureResult is the 201 answer of POST /_sim/guilds.
type FixtureResult struct {
	ID        string `json:"id"`
	BotUserID string `json:"bot_user_id"`
	// ApplicationID is the bot's application: interactions name it, and
	// their follow-ups go to /webhooks/{application_id}/{token}.
	ApplicationID string       `json:"application_id"`
	BotRoleID     string       `json:"bot_role_id"`
	Roles         []NamedID    `json:"roles"`
	Channels      []NamedID    `json:"channels"`
	Members       []MemberName `json:"members"`
	// Emojis are the fixture's custom emojis, for reactions as name:id.
	Emojis []NamedID `json:"emojis,omitempty"`
}

type NamedID struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

type MemberName struct {
	ID       string `json:"id"`
	Username string `json:"username"`
}

// Role looks up a fixture role id by name.
func (r FixtureResult) Role(name string) string { return lookupName(r.Roles, name) }

// Channel looks up a fixture channel id by name.
func (r FixtureResult) Channel(name string) string { return lookupName(r.Channels, name) }

// Emoji looks up a fixture emoji id by name.
func (r FixtureResult) Emoji(name string) string { return lookupName(r.Emojis, name) }

// Member looks up a fixture member id by username.
func (r FixtureResult) Member(username string) string {
	for _, m := range r.Members {
		if m.Username == username {
			return m.ID
		}
	}
	return ""
}

func lookupName(list []NamedID, name string) string {
	for _, n := range list {
		if n.Name == name {
			return n.ID
		}
	}
	return ""
}

// Discord's default @everyone permissions, and what herald's bot role is
// granted when the fixture does not say.
const (
	defaultEveryone = permViewChannel | permSendMessages | permReadMessageHistory | permAddReactions |
		permEmbedLinks | permAttachFiles | permCreateInstantInvite | permSendMessagesInThreads |
		permCreatePublicThreads | permCreatePrivateThreads | 1<<31 // Use Application Commands
	defaultBotPerms = permManageRoles | permManageChannels | permViewChannel | permSendMessages |
		permManageMessages | permEmbedLinks | permAttachFiles | permReadMessageHistory |
		permManageWebhooks | permManageThreads | permCreatePrivateThreads | permCreatePublicThreads |
		permSendMessagesInThreads | permAddReactions | permPinMessages
)

// DefaultFixture is the guild `herald sim --fixture default` and the demo
// load: a Moderator above the bot, topic roles below it, two text
// channels, a Support category and a few members.
func DefaultFixture() Fixture {
	mod := strconv.FormatUint(permManageMessages|permKickMembers|permManageThreads|permManageNicknames|permViewChannel|permSendMessages|permReadMessageHistory, 10)
	return Fixture{
		Name: "Herald Test Guild",
		Roles: []FixtureRole{
			{Name: "Moderator", Permissions: mod, Position: 10},
			{Name: "News", Permissions: "0", Position: 1},
			{Name: "Events", Permissions: "0", Position: 2},
			{Name: "Gaming", Permissions: "0", Position: 3},
			{Name: "Art", Permissions: "0", Position: 4},
		},
		Channels: []FixtureChannel{
			{Name: "general", Type: channelText},
			{Name: "roles", Type: channelText},
			{Name: "Support", Type: channelCategory},
			{Name: "support-info", Type: channelText, Parent: "Support"},
		},
		Members: []FixtureMember{
			{Username: "alice", Roles: []string{"Moderator"}},
			{Username: "bob", Roles: []string{"News"}},
			{Username: "carol", Roles: []string{"Events", "Gaming"}},
			{Username: "dave"},
		},
		BotRole: &FixtureRole{Name: "herald", Position: 5},
	}
}

// LoadFixture creates the fixture's guild with the bot as a member and
// raises GUILD_CREATE for connected sessions (unless Uninvited).
func (s *Server) LoadFixture(f Fixture) (FixtureResult, error) {
	s.mu.Lock()
	res, guild, err := s.loadFixture(f)
	s.mu.Unlock()
	if err != nil {
		return FixtureResult{}, err
	}
	if guild != nil {
		s.gw.DispatchGuild(res.ID, guild.full, guild.withoutPresences)
	}
	return res, nil
}

func parsePerms(field, v string, def uint64) (uint64, error) {
	if v == "" {
		return def, nil
	}
	p, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("sim: fixture %s permissions %q: not a bitfield string", field, v)
	}
	return p, nil
}

// loadFixture builds the guild under the lock. It validates everything
// before changing state.
func (s *Server) loadFixture(f Fixture) (FixtureResult, *guildCreate, error) {
	now := s.clock.Now()
	st := s.st
	if f.Name == "" {
		return FixtureResult{}, nil, fmt.Errorf("sim: fixture needs a name")
	}
	if f.PremiumTier < 0 || f.PremiumTier > maxPremiumTier {
		return FixtureResult{}, nil, fmt.Errorf("sim: fixture premium_tier %d: Discord's levels are 0 to 3", f.PremiumTier)
	}
	everyone, err := parsePerms("@everyone", f.Everyone, defaultEveryone)
	if err != nil {
		return FixtureResult{}, nil, err
	}
	g := &guild{id: st.ids.next(now), name: f.Name, roles: map[string]*role{}, members: map[string]*member{}, emojis: map[string]string{}, premiumTier: f.PremiumTier}
	g.roles[g.id] = &role{id: g.id, name: "@everyone", permissions: everyone}
	res := FixtureResult{ID: g.id, BotUserID: st.botID, ApplicationID: st.appID, Roles: []NamedID{}, Channels: []NamedID{}, Members: []MemberName{}}
	byName := map[string]*role{"@everyone": g.roles[g.id]}
	top := 0
	for i, fr := range f.Roles {
		perms, err := parsePerms(fr.Name, fr.Permissions, 0)
		if err != nil {
			return FixtureResult{}, nil, err
		}
		pos := fr.Position
		if pos <= 0 {
			pos = i + 1
		}
		r := &role{id: st.ids.next(now), name: fr.Name, permissions: perms, position: pos}
		g.roles[r.id] = r
		byName[r.name] = r
		top = max(top, pos)
		res.Roles = append(res.Roles, NamedID{ID: r.id, Name: r.name})
	}
	botRole := &role{id: st.ids.next(now), name: s.opts.BotName, permissions: defaultBotPerms, position: top + 1, managed: true}
	if br := f.BotRole; br != nil && !f.Uninvited {
		if br.Name != "" {
			botRole.name = br.Name
		}
		if botRole.permissions, err = parsePerms("bot role", br.Permissions, defaultBotPerms); err != nil {
			return FixtureResult{}, nil, err
		}
		if br.Position > 0 {
			botRole.position = br.Position
		}
	}
	if !f.Uninvited {
		g.roles[botRole.id] = botRole
		byName[botRole.name] = botRole
		res.BotRoleID = botRole.id
	}

	owner := &user{id: st.ids.next(now), username: "owner"}
	g.ownerID = owner.id
	users := []*user{owner}
	g.members[owner.id] = &member{userID: owner.id, joinedAt: now}
	res.Members = append(res.Members, MemberName{ID: owner.id, Username: owner.username})
	if !f.Uninvited {
		g.members[st.botID] = &member{userID: st.botID, roles: []string{botRole.id}, joinedAt: now}
	}
	for _, fm := range f.Members {
		u := &user{id: st.ids.next(now), username: fm.Username, dmsClosed: fm.DMsClosed}
		m := &member{userID: u.id, joinedAt: now}
		for _, name := range fm.Roles {
			r, ok := byName[name]
			if !ok || r.id == g.id {
				return FixtureResult{}, nil, fmt.Errorf("sim: fixture member %q has unknown role %q", fm.Username, name)
			}
			m.roles = append(m.roles, r.id)
		}
		users = append(users, u)
		g.members[u.id] = m
		res.Members = append(res.Members, MemberName{ID: u.id, Username: u.username})
	}

	for _, name := range f.Emojis {
		id := st.ids.next(now)
		g.emojis[id] = name
		res.Emojis = append(res.Emojis, NamedID{ID: id, Name: name})
	}
	channels, err := s.fixtureChannels(g, f.Channels, byName, now)
	if err != nil {
		return FixtureResult{}, nil, err
	}
	for _, c := range channels {
		st.channels[c.id] = c
		g.channels = append(g.channels, c.id)
		res.Channels = append(res.Channels, NamedID{ID: c.id, Name: c.name})
	}
	for _, u := range users {
		st.users[u.id] = u
	}
	st.guilds[g.id] = g
	st.guildOrder = append(st.guildOrder, g.id)
	if f.Uninvited {
		return res, nil, nil
	}
	return res, st.renderGuildCreate(g), nil
}

// fixtureChannels builds the channels, categories first so children can
// name them, and enforces Discord's channel caps.
func (s *Server) fixtureChannels(g *guild, list []FixtureChannel, roles map[string]*role, now time.Time) ([]*channel, error) {
	if len(list) > maxGuildChannels {
		return nil, fmt.Errorf("sim: fixture has %d channels; Discord allows %d", len(list), maxGuildChannels)
	}
	out := make([]*channel, len(list))
	categories := map[string]*channel{}
	for _, pass := range []bool{true, false} {
		for i, fc := range list {
			if (fc.Type == channelCategory) != pass {
				continue
			}
			c := &channel{id: s.st.ids.next(now), guildID: g.id, name: fc.Name, typ: fc.Type, position: i}
			if fc.Topic != "" {
				topic := fc.Topic
				c.topic = &topic
			}
			for _, o := range fc.Overwrites {
				r, ok := roles[o.Role]
				if !ok {
					return nil, fmt.Errorf("sim: fixture channel %q overwrites unknown role %q", fc.Name, o.Role)
				}
				allow, err := parsePerms(fc.Name+" allow", o.Allow, 0)
				if err != nil {
					return nil, err
				}
				deny, err := parsePerms(fc.Name+" deny", o.Deny, 0)
				if err != nil {
					return nil, err
				}
				c.overwrites = append(c.overwrites, overwrite{id: r.id, allow: allow, deny: deny})
			}
			if fc.Parent != "" {
				p, ok := categories[fc.Parent]
				if !ok {
					return nil, fmt.Errorf("sim: fixture channel %q has unknown category %q", fc.Name, fc.Parent)
				}
				c.parentID = p.id
			}
			if c.typ == channelCategory {
				categories[c.name] = c
			}
			out[i] = c
		}
	}
	children := map[string]int{}
	for _, c := range out {
		if c.parentID != "" {
			if children[c.parentID]++; children[c.parentID] > maxCategoryChildren {
				return nil, fmt.Errorf("sim: fixture category has more than %d channels", maxCategoryChildren)
			}
		}
	}
	return out, nil
}
