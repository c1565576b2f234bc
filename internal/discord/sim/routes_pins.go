package sim

import (
	"slices"
	"time"
)

// pinnedMessages returns the channel's pinned messages, latest pin first.
func pinnedMessages(c *channel) []*message {
	var out []*message
	for _, m := range c.messages {
		if !m.pinnedAt.IsZero() {
			out = append(out, m)
		}
	}
	slices.SortStableFunc(out, func(a, b *message) int { return b.pinnedAt.Compare(a.pinnedAt) })
	return out
}

// listPins is Get Channel Pins: {items: [{pinned_at, message}], has_more},
// latest pin first, before an ISO 8601 pin time, limit 1–50 (default 50).
func listPins(s *Server, rq *request) (any, *apiError) {
	c, err := s.st.channel(rq.params["channel_id"])
	if err != nil {
		return nil, err
	}
	if err := s.st.requireChannel(c, permViewChannel|permReadMessageHistory); err != nil {
		return nil, err
	}
	q := rq.r.URL.Query()
	limit, err := queryInt(q.Get("limit"), "limit", 50, 1, 50)
	if err != nil {
		return nil, err
	}
	pins := pinnedMessages(c)
	if raw := q.Get("before"); raw != "" {
		before, perr := time.Parse(time.RFC3339Nano, raw)
		if perr != nil {
			var f formErrors
			f.add("before", "DATE_TIME_TYPE_PARSE", "Could not interpret \""+raw+"\" as date time.")
			return nil, f.err()
		}
		pins = slices.DeleteFunc(pins, func(m *message) bool { return !m.pinnedAt.Before(before) })
	}
	items := []any{}
	for _, m := range pins[:min(limit, len(pins))] {
		items = append(items, map[string]any{"pinned_at": timestamp(m.pinnedAt), "message": s.st.readMessage(m)})
	}
	return map[string]any{"items": items, "has_more": len(pins) > limit}, nil
}

// pinTarget resolves the message of a pin or unpin, which needs Pin
// Messages in the channel.
func (s *Server) pinTarget(rq *request) (*channel, *message, *apiError) {
	c, err := s.st.channel(rq.params["channel_id"])
	if err != nil {
		return nil, nil, err
	}
	if err := s.st.requireChannel(c, permViewChannel|permReadMessageHistory|permPinMessages); err != nil {
		return nil, nil, err
	}
	m, err := s.st.message(c, rq.params["message_id"])
	if err != nil {
		return nil, nil, err
	}
	return c, m, nil
}

// pinMessage pins a message (at most 250 per channel). Discord posts the
// "pinned a message" system message (type 6) and raises MESSAGE_UPDATE and
// CHANNEL_PINS_UPDATE; pinning a pinned message changes nothing.
func pinMessage(s *Server, rq *request) (any, *apiError) {
	c, m, err := s.pinTarget(rq)
	if err != nil {
		return nil, err
	}
	if !m.pinnedAt.IsZero() {
		return nil, nil
	}
	if len(pinnedMessages(c)) >= maxChannelPins {
		return nil, errMaxPins
	}
	m.pinnedAt = rq.now
	c.lastPinAt = rq.now
	s.emitMessage(rq, "MESSAGE_UPDATE", m)
	s.emitPinsUpdate(rq, c)
	notice := &message{id: s.st.ids.next(rq.now), typ: 6, channelID: c.id, guildID: c.guildID,
		authorID: s.st.botID, timestamp: rq.now, reference: m.id}
	s.postMessage(rq, c, notice)
	return nil, nil
}

// unpinMessage unpins a message; unpinning one that is not pinned changes
// nothing.
func unpinMessage(s *Server, rq *request) (any, *apiError) {
	c, m, err := s.pinTarget(rq)
	if err != nil {
		return nil, err
	}
	if m.pinnedAt.IsZero() {
		return nil, nil
	}
	m.pinnedAt = time.Time{}
	c.lastPinAt = time.Time{}
	if pins := pinnedMessages(c); len(pins) > 0 {
		c.lastPinAt = pins[0].pinnedAt
	}
	s.emitMessage(rq, "MESSAGE_UPDATE", m)
	s.emitPinsUpdate(rq, c)
	return nil, nil
}

func (s *Server) emitPinsUpdate(rq *request, c *channel) {
	var last any
	if !c.lastPinAt.IsZero() {
		last = timestamp(c.lastPinAt)
	}
	rq.emit(c.guildID, "CHANNEL_PINS_UPDATE", withGuild(map[string]any{"channel_id": c.id, "last_pin_timestamp": last}, c.guildID))
}
