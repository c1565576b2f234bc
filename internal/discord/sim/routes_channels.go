package sim

import (
	"bytes"
	"encoding/json"
	"net/http"
	"reflect"
	"strconv"
	"time"
)

// flexUint is a permission bitfield that Discord accepts as a string or
// a number.
type flexUint uint64

func (f *flexUint) UnmarshalJSON(b []byte) error {
	b = bytes.Trim(b, `"`)
	if len(b) == 0 {
		*f = 0
		return nil
	}
	n, err := strconv.ParseUint(string(b), 10, 64)
	if err != nil {
		return &json.UnmarshalTypeError{Value: string(b), Type: reflect.TypeFor[uint64]()}
	}
	*f = flexUint(n)
	return nil
}

type overwriteBody struct {
	ID    string   `json:"id"`
	Type  int      `json:"type"`
	Allow flexUint `json:"allow"`
	Deny  flexUint `json:"deny"`
}

// channelBody is the JSON of channel create and modify, threads included.
type channelBody struct {
	Name                 *string          `json:"name"`
	Type                 *int             `json:"type"`
	Topic                *string          `json:"topic"`
	ParentID             *string          `json:"parent_id"`
	Position             *int             `json:"position"`
	NSFW                 *bool            `json:"nsfw"`
	RateLimitPerUser     *int             `json:"rate_limit_per_user"`
	PermissionOverwrites *[]overwriteBody `json:"permission_overwrites"`
	Archived             *bool            `json:"archived"`
	Locked               *bool            `json:"locked"`
	Invitable            *bool            `json:"invitable"`
	AutoArchiveDuration  *int             `json:"auto_archive_duration"`
}

func (b *channelBody) validate(f *formErrors, creating bool) {
	switch {
	case b.Name != nil:
		f.between("name", len([]rune(*b.Name)), 1, 100)
	case creating:
		f.required("name")
	}
	if b.Topic != nil {
		f.maxLen("topic", len([]rune(*b.Topic)), 1024)
	}
	if b.RateLimitPerUser != nil && (*b.RateLimitPerUser < 0 || *b.RateLimitPerUser > 21600) {
		f.add("rate_limit_per_user", "NUMBER_TYPE_MAX", "int value should be less than or equal to 21600.")
	}
	if b.Type != nil {
		switch *b.Type {
		case channelText, channelVoice, channelCategory, channelAnnouncement, 13, channelForum:
		default:
			f.add("type", "BASE_TYPE_CHOICES", "Value must be one of {0, 2, 4, 5, 13, 15}.")
		}
	}
}

// checkChannel validates a create (creating) or modify body for c, the
// new or existing channel of g.
func (s *Server) checkChannel(g *guild, c *channel, body *channelBody, creating bool) *apiError {
	var f formErrors
	body.validate(&f, creating)
	if body.ParentID != nil {
		s.checkParent(g, c, *body.ParentID, &f)
	}
	return f.err()
}

// checkParent validates a new parent category, including Discord's cap of
// 50 channels per category.
func (s *Server) checkParent(g *guild, c *channel, parentID string, f *formErrors) {
	if parentID == "" {
		return
	}
	p, ok := s.st.channels[parentID]
	if !ok || p.guildID != g.id || p.typ != channelCategory || c.typ == channelCategory {
		f.add("parent_id", "CHANNEL_PARENT_INVALID_TYPE", "Not a category")
		return
	}
	if c.parentID == parentID {
		return
	}
	children := 0
	for _, id := range g.channels {
		if s.st.channels[id].parentID == parentID {
			children++
		}
	}
	if children >= maxCategoryChildren {
		f.add("parent_id", "CHANNEL_PARENT_MAX_CHANNELS", "Maximum number of channels in category reached (50)")
	}
}

// toOverwrites checks the overwrites the bot sets on c (a channel being
// created has no id yet): it may only allow or deny permissions it holds
// in the guild, unless it has a Manage Roles overwrite in c; and only an
// administrator may set Manage Roles on a channel it creates (Create
// Guild Channel, Modify Channel, Edit Channel Permissions).
func (s *Server) toOverwrites(g *guild, c *channel, body []overwriteBody) ([]overwrite, *apiError) {
	bot := s.st.botMember(g)
	allowed := basePermissions(g, bot)
	switch {
	case allowed&permAdministrator != 0:
	case c.id == "":
		allowed &^= permManageRoles
	case manageRolesOverwrite(g, c, bot):
		allowed = permAll
	}
	out := make([]overwrite, 0, len(body))
	var f formErrors
	for i, o := range body {
		if o.Type != 0 && o.Type != 1 {
			f.add("permission_overwrites."+strconv.Itoa(i)+".type", "BASE_TYPE_CHOICES", "Value must be one of {0, 1}.")
		}
		if uint64(o.Allow|o.Deny)&^allowed != 0 {
			return nil, errMissingPermissions
		}
		out = append(out, overwrite{id: o.ID, typ: o.Type, allow: uint64(o.Allow), deny: uint64(o.Deny)})
	}
	return out, f.err()
}

// manageRolesOverwrite reports whether c has an overwrite allowing m
// Manage Roles: m's own, or one of a role m has.
func manageRolesOverwrite(g *guild, c *channel, m *member) bool {
	for _, o := range c.overwrites {
		mine := o.typ == 1 && o.id == m.userID || o.typ == 0 && (o.id == g.id || hasRole(m, o.id))
		if mine && o.allow&permManageRoles != 0 {
			return true
		}
	}
	return false
}

// applyChannel sets on c, new or existing, what a create or modify body
// carries; c is left as it was when the overwrites are refused.
func (s *Server) applyChannel(g *guild, c *channel, body *channelBody) *apiError {
	if body.PermissionOverwrites != nil {
		ows, err := s.toOverwrites(g, c, *body.PermissionOverwrites)
		if err != nil {
			return err
		}
		c.overwrites = ows
	}
	if body.Name != nil {
		c.name = *body.Name
	}
	if body.Topic != nil {
		c.topic = body.Topic
	}
	if body.ParentID != nil {
		c.parentID = *body.ParentID
	}
	if body.Position != nil {
		c.position = *body.Position
	}
	if body.NSFW != nil {
		c.nsfw = *body.NSFW
	}
	if body.RateLimitPerUser != nil {
		c.rateLimitPerUser = *body.RateLimitPerUser
	}
	return nil
}

// renameLimit is Discord's separate limit on changing a channel's name or
// topic: two per ten minutes per channel, threads included.
func renameLimit(rq *request) (string, Limit, bool) {
	var body map[string]json.RawMessage
	if json.Unmarshal(rq.body, &body) != nil {
		return "", Limit{}, false
	}
	_, name := body["name"]
	_, topic := body["topic"]
	return "channel-rename", per(2, 10*time.Minute), name || topic
}

func listChannels(s *Server, rq *request) (any, *apiError) {
	g, err := s.st.guild(rq.params["guild_id"])
	if err != nil {
		return nil, err
	}
	out := []any{}
	for _, id := range g.channels {
		out = append(out, s.st.renderChannel(s.st.channels[id]))
	}
	return out, nil
}

func createChannel(s *Server, rq *request) (any, *apiError) {
	g, err := s.st.guild(rq.params["guild_id"])
	if err != nil {
		return nil, err
	}
	var body channelBody
	if err := rq.decode(&body); err != nil {
		return nil, err
	}
	c := &channel{guildID: g.id, typ: channelText, position: len(g.channels)}
	if body.Type != nil {
		c.typ = *body.Type
	}
	if err := s.checkChannel(g, c, &body, true); err != nil {
		return nil, err
	}
	if err := s.st.requireGuild(g, permManageChannels); err != nil {
		return nil, err
	}
	if len(g.channels) >= maxGuildChannels {
		return nil, errMaxChannels
	}
	if err := s.applyChannel(g, c, &body); err != nil {
		return nil, err
	}
	c.id = s.st.ids.next(rq.now)
	s.st.channels[c.id] = c
	g.channels = append(g.channels, c.id)
	rendered := s.st.renderChannel(c)
	rq.emit(g.id, "CHANNEL_CREATE", rendered)
	rq.status = http.StatusCreated
	return rendered, nil
}

// visibleChannel finds a channel the bot can see: 10003 when it does not
// exist, 50001 when the bot cannot view it.
func (s *Server) visibleChannel(rq *request) (*channel, *apiError) {
	c, err := s.st.channel(rq.params["channel_id"])
	if err != nil {
		return nil, err
	}
	if err := s.st.requireChannel(c, permViewChannel); err != nil {
		return nil, err
	}
	return c, nil
}

func getChannel(s *Server, rq *request) (any, *apiError) {
	c, err := s.visibleChannel(rq)
	if err != nil {
		return nil, err
	}
	return s.st.renderChannel(c), nil
}

func modifyChannel(s *Server, rq *request) (any, *apiError) {
	c, err := s.st.channel(rq.params["channel_id"])
	if err != nil {
		return nil, err
	}
	var body channelBody
	if err := rq.decode(&body); err != nil {
		return nil, err
	}
	if c.isThread() {
		return s.modifyThread(rq, c, body)
	}
	if c.typ == channelDM {
		return nil, errDMChannel
	}
	g := s.st.guilds[c.guildID]
	if err := s.checkChannel(g, c, &body, false); err != nil {
		return nil, err
	}
	perm := permManageChannels
	if body.PermissionOverwrites != nil {
		perm |= permManageRoles // "If modifying permission overwrites, the MANAGE_ROLES permission is required"
	}
	if err := s.st.requireChannel(c, perm); err != nil {
		return nil, err
	}
	if err := s.applyChannel(g, c, &body); err != nil {
		return nil, err
	}
	rendered := s.st.renderChannel(c)
	rq.emit(g.id, "CHANNEL_UPDATE", rendered)
	return rendered, nil
}

func deleteChannel(s *Server, rq *request) (any, *apiError) {
	c, err := s.st.channel(rq.params["channel_id"])
	if err != nil {
		return nil, err
	}
	if c.typ == channelDM {
		// Closing a DM keeps the channel: the same one opens again.
		return s.st.renderChannel(c), nil
	}
	perm := permManageChannels
	if c.isThread() {
		perm = permManageThreads
	}
	if err := s.st.requireChannel(c, perm); err != nil {
		return nil, err
	}
	rendered := s.st.renderChannel(c)
	s.deleteChannelEmit(rq, c)
	return rendered, nil
}

// deleteChannelEmit deletes a channel and raises CHANNEL_DELETE or
// THREAD_DELETE for it and for every thread that went with it.
func (s *Server) deleteChannelEmit(rq *request, c *channel) {
	rendered := s.st.renderChannel(c)
	threads := s.st.deleteChannel(c)
	for _, t := range threads {
		rq.emit(t.guildID, "THREAD_DELETE", threadDelete(t))
	}
	if c.isThread() {
		rq.emit(c.guildID, "THREAD_DELETE", threadDelete(c))
		return
	}
	rq.emit(c.guildID, "CHANNEL_DELETE", rendered)
}

func threadDelete(t *channel) map[string]any {
	return map[string]any{"id": t.id, "guild_id": t.guildID, "parent_id": t.parentID, "type": t.typ}
}
