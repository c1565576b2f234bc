package sim

import (
	"slices"
	"strings"
	"unicode"
)

// parseEmoji reads the {emoji_name} of a reactions path: a unicode emoji,
// or a custom one as name:id whose id is an emoji of a guild the bot is
// in. Anything else is 10014 Unknown Emoji, as Discord answers an emoji
// that was not URL-encoded.
func (s *state) parseEmoji(raw string) (emoji, *apiError) {
	if name, id, ok := strings.Cut(raw, ":"); ok {
		for _, g := range s.guilds {
			if stored, ok := g.emojis[id]; ok && name != "" {
				return emoji{id: id, name: stored}, nil
			}
		}
		return emoji{}, errUnknown(codeUnknownEmoji)
	}
	if !isUnicodeEmoji(raw) {
		return emoji{}, errUnknown(codeUnknownEmoji)
	}
	return emoji{name: raw}, nil
}

// isUnicodeEmoji accepts pictographs with their modifiers, joiners and
// variation selectors, flags, and keycaps (a digit, # or * with U+20E3).
func isUnicodeEmoji(s string) bool {
	keycap := strings.ContainsRune(s, '\u20e3')
	symbol := false
	for _, r := range s {
		switch {
		case unicode.Is(unicode.So, r), keycap && r == '\u20e3':
			symbol = true
		case unicode.In(r, unicode.Sk, unicode.Mn, unicode.Me), r == '\u200d', r >= 0xe0020 && r <= 0xe007f:
		case keycap && (r == '#' || r == '*' || r >= '0' && r <= '9'):
		default:
			return false
		}
	}
	return symbol
}

func (e emoji) render() map[string]any {
	return map[string]any{"id": nilIfEmpty(e.id), "name": e.name}
}

func (m *message) reaction(e emoji) *reaction {
	for _, r := range m.reactions {
		if r.emoji == e {
			return r
		}
	}
	return nil
}

// renderReactions is the message's reactions array: count, me and the
// normal/burst split (the simulator models normal reactions only).
func (s *state) renderReactions(m *message) []any {
	out := []any{}
	for _, r := range m.reactions {
		out = append(out, map[string]any{
			"emoji": r.emoji.render(), "count": len(r.users),
			"count_details": map[string]any{"burst": 0, "normal": len(r.users)},
			"burst_colors":  []any{}, "me": slices.Contains(r.users, s.botID), "me_burst": false,
		})
	}
	return out
}

// reactionTarget resolves the channel, message and emoji of a reactions
// path, checking perm in the channel.
func (s *Server) reactionTarget(rq *request, perm uint64) (*channel, *message, emoji, *apiError) {
	c, m, err := s.channelMessage(rq, perm)
	if err != nil {
		return nil, nil, emoji{}, err
	}
	e, err := s.st.parseEmoji(rq.params["emoji_name"])
	if err != nil {
		return nil, nil, emoji{}, err
	}
	return c, m, e, nil
}

// addReaction adds userID's reaction to m, creating the emoji's entry:
// at most 20 distinct emoji per message. It raises MESSAGE_REACTION_ADD.
func (s *Server) addReaction(rq *request, c *channel, m *message, e emoji, userID string) *apiError {
	r := m.reaction(e)
	if r == nil {
		if len(m.reactions) >= maxReactionEmojis {
			return errMaxReactions
		}
		r = &reaction{emoji: e}
		m.reactions = append(m.reactions, r)
	}
	if slices.Contains(r.users, userID) {
		return nil
	}
	r.users = append(r.users, userID)
	ev := s.reactionEvent(c, m, e, userID)
	ev["message_author_id"] = m.authorID
	ev["burst_colors"] = []any{}
	if g, ok := s.st.guilds[c.guildID]; ok {
		if mem, ok := g.members[userID]; ok {
			ev["member"] = s.st.renderMember(mem)
		}
	}
	rq.emit(c.guildID, "MESSAGE_REACTION_ADD", ev)
	return nil
}

func (s *Server) reactionEvent(c *channel, m *message, e emoji, userID string) map[string]any {
	return withGuild(map[string]any{
		"user_id": userID, "channel_id": c.id, "message_id": m.id, "emoji": e.render(),
		"burst": false, "type": 0,
	}, c.guildID)
}

// removeReaction takes userID's reaction off m, dropping the emoji's entry
// when it was the last one. It raises MESSAGE_REACTION_REMOVE.
func (s *Server) removeReaction(rq *request, c *channel, m *message, e emoji, userID string) {
	r := m.reaction(e)
	if r == nil || !slices.Contains(r.users, userID) {
		return
	}
	r.users = slices.DeleteFunc(r.users, func(id string) bool { return id == userID })
	if len(r.users) == 0 {
		m.reactions = slices.DeleteFunc(m.reactions, func(x *reaction) bool { return x == r })
	}
	rq.emit(c.guildID, "MESSAGE_REACTION_REMOVE", s.reactionEvent(c, m, e, userID))
}

// createReaction is PUT .../reactions/{emoji}/@me: Read Message History,
// and Add Reactions unless someone already reacted with that emoji.
func createReaction(s *Server, rq *request) (any, *apiError) {
	c, m, e, err := s.reactionTarget(rq, permViewChannel|permReadMessageHistory)
	if err != nil {
		return nil, err
	}
	if m.reaction(e) == nil {
		if err := s.st.requireChannel(c, permAddReactions); err != nil {
			return nil, err
		}
	}
	return nil, s.addReaction(rq, c, m, e, s.st.botID)
}

func deleteOwnReaction(s *Server, rq *request) (any, *apiError) {
	c, m, e, err := s.reactionTarget(rq, permViewChannel)
	if err != nil {
		return nil, err
	}
	s.removeReaction(rq, c, m, e, s.st.botID)
	return nil, nil
}

// deleteUserReaction removes another user's reaction: Manage Messages.
func deleteUserReaction(s *Server, rq *request) (any, *apiError) {
	c, m, e, err := s.reactionTarget(rq, permViewChannel|permManageMessages)
	if err != nil {
		return nil, err
	}
	userID := rq.params["user_id"]
	if _, ok := s.st.users[userID]; !ok {
		return nil, errUnknown(codeUnknownUser)
	}
	s.removeReaction(rq, c, m, e, userID)
	return nil, nil
}

// listReactions is Get Reactions: the users who reacted with the emoji,
// by id, after a user id, limit 1–100 (default 25). Burst reactions (type
// 1) are not modelled, so that list is empty.
func listReactions(s *Server, rq *request) (any, *apiError) {
	_, m, e, err := s.reactionTarget(rq, permViewChannel|permReadMessageHistory)
	if err != nil {
		return nil, err
	}
	q := rq.r.URL.Query()
	limit, err := queryInt(q.Get("limit"), "limit", 25, 1, 100)
	if err != nil {
		return nil, err
	}
	typ, err := queryInt(q.Get("type"), "type", 0, 0, 1)
	if err != nil {
		return nil, err
	}
	var ids []string
	if r := m.reaction(e); r != nil && typ == 0 {
		after := q.Get("after")
		for _, id := range r.users {
			if after == "" || snowflakeLess(after, id) {
				ids = append(ids, id)
			}
		}
	}
	slices.SortFunc(ids, compareSnowflakes)
	out := []any{}
	for _, id := range ids[:min(limit, len(ids))] {
		out = append(out, s.st.renderUser(id))
	}
	return out, nil
}

// deleteAllReactions clears a message's reactions (Manage Messages) and
// raises MESSAGE_REACTION_REMOVE_ALL.
func deleteAllReactions(s *Server, rq *request) (any, *apiError) {
	c, m, err := s.channelMessage(rq, permViewChannel|permManageMessages)
	if err != nil {
		return nil, err
	}
	if len(m.reactions) > 0 {
		m.reactions = nil
		rq.emit(c.guildID, "MESSAGE_REACTION_REMOVE_ALL", withGuild(map[string]any{"channel_id": c.id, "message_id": m.id}, c.guildID))
	}
	return nil, nil
}

// deleteEmojiReactions clears one emoji's reactions (Manage Messages) and
// raises MESSAGE_REACTION_REMOVE_EMOJI.
func deleteEmojiReactions(s *Server, rq *request) (any, *apiError) {
	c, m, e, err := s.reactionTarget(rq, permViewChannel|permManageMessages)
	if err != nil {
		return nil, err
	}
	if r := m.reaction(e); r != nil {
		m.reactions = slices.DeleteFunc(m.reactions, func(x *reaction) bool { return x == r })
		rq.emit(c.guildID, "MESSAGE_REACTION_REMOVE_EMOJI", withGuild(map[string]any{"channel_id": c.id, "message_id": m.id, "emoji": e.render()}, c.guildID))
	}
	return nil, nil
}
