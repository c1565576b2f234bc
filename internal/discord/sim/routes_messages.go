package sim

import (
	"net/http"
	"strings"
)

var (
	errNonTextChannel = &apiError{status: http.StatusBadRequest, code: 50008, message: "Cannot send messages in a non-text channel"}
	errForumChannel   = &apiError{status: http.StatusBadRequest, code: 40058, message: "Cannot send a message in a forum channel"}
)

var errEditOthers = &apiError{status: http.StatusForbidden, code: 50005, message: "Cannot edit a message authored by another user"}

// decodeMessage reads and validates the message body of a create (empty
// messages are refused) or of an edit, with its files against the upload
// limit of the guild it goes to (uploadLimit).
func (rq *request) decodeMessage(creating bool, uploadLimit int) (*messageBody, *apiError) {
	if err := rq.uploadsFit(uploadLimit); err != nil {
		return nil, err
	}
	var body messageBody
	if err := rq.decode(&body); err != nil {
		return nil, err
	}
	if err := body.validate("", len(rq.files), creating); err != nil {
		return nil, err
	}
	return &body, nil
}

// buildMessage turns a validated body and the uploaded files into a new
// message (not yet stored).
func (s *Server) buildMessage(rq *request, c *channel, body *messageBody, authorID string) *message {
	m := &message{
		id: s.st.ids.next(rq.now), channelID: c.id, guildID: c.guildID, authorID: authorID,
		tts: body.TTS, nonce: body.nonce(), timestamp: rq.now,
	}
	setContent(m, body)
	if body.Flags != nil {
		m.flags = *body.Flags
	}
	m.attachments = s.attachments(rq, body)
	return m
}

// setContent copies the content, embeds and components present in the
// body onto m, normalized as Discord stores them.
func setContent(m *message, body *messageBody) {
	if body.Content != nil {
		m.content = *body.Content
	}
	if body.Embeds != nil {
		m.embeds = normalizeEmbeds(*body.Embeds)
	}
	if body.Components != nil {
		m.components = normalizeComponents(*body.Components)
	}
}

// attachments maps multipart files[n] parts to attachments, taking
// descriptions from the payload's attachments[] entry with id n.
func (s *Server) attachments(rq *request, body *messageBody) []attachment {
	var out []attachment
	for _, up := range rq.files {
		a := attachment{id: s.st.ids.next(rq.now), filename: up.filename, size: up.size, contentType: up.contentType}
		n := strings.TrimSuffix(strings.TrimPrefix(up.field, "files["), "]")
		if body.Attachments != nil {
			for _, ref := range *body.Attachments {
				if strings.Trim(string(ref.ID), `"`) == n {
					a.description = ref.Description
					if ref.Filename != "" {
						a.filename = ref.Filename
					}
				}
			}
		}
		out = append(out, a)
	}
	return out
}

// applyEdit changes a stored message as PATCH does: only fields present in
// the body change; attachments[] keeps the listed existing attachments.
func (s *Server) applyEdit(rq *request, m *message, body *messageBody) {
	setContent(m, body)
	if body.Flags != nil {
		m.flags = m.flags&flagEphemeral | *body.Flags&^flagEphemeral
	}
	if body.Attachments != nil {
		var kept []attachment
		for _, a := range m.attachments {
			for _, ref := range *body.Attachments {
				if strings.Trim(string(ref.ID), `"`) == a.id {
					kept = append(kept, a)
				}
			}
		}
		m.attachments = kept
	}
	m.attachments = append(m.attachments, s.attachments(rq, body)...)
	now := rq.now
	m.editedAt = &now
}

// writableChannel checks that the bot may post in c: the channel accepts
// messages, the bot can see it and send (in threads: send in threads), and
// a locked archived thread stays closed.
func (s *Server) writableChannel(c *channel, files int) *apiError {
	switch c.typ {
	case channelCategory:
		return errNonTextChannel
	case channelForum:
		return errForumChannel
	}
	if c.typ == channelDM {
		if u, ok := s.st.users[c.recipientID]; !ok || u.dmsClosed || u.bot {
			return errCannotDMUser
		}
		return nil
	}
	perm := permSendMessages
	if c.isThread() {
		perm = permSendMessagesInThreads
	}
	if files > 0 {
		perm |= permAttachFiles
	}
	if err := s.st.requireChannel(c, perm); err != nil {
		return err
	}
	if c.isThread() && c.archived && c.locked && !s.botCan(c, permManageThreads) {
		return errThreadArchived
	}
	return nil
}

// postMessage stores m and raises MESSAGE_CREATE. A message is activity
// in a thread, and unarchives it ("Sending a message will automatically
// unarchive the thread"; writableChannel refused a locked one).
func (s *Server) postMessage(rq *request, c *channel, m *message) map[string]any {
	switch {
	case c.isThread() && c.archived:
		s.unarchiveThread(rq, c, true)
	case c.isThread():
		s.threadActivity(rq, c)
	}
	s.st.addMessage(c, m)
	s.emitMessage(rq, "MESSAGE_CREATE", m)
	return s.st.renderMessage(m)
}

func createMessage(s *Server, rq *request) (any, *apiError) {
	c, err := s.st.channel(rq.params["channel_id"])
	if err != nil {
		return nil, err
	}
	body, err := rq.decodeMessage(true, s.st.uploadLimit(c.guildID))
	if err != nil {
		return nil, err
	}
	if body.Flags != nil && *body.Flags&flagEphemeral != 0 {
		var f formErrors
		f.add("flags", "MESSAGE_FLAGS_INVALID", "Invalid message flags")
		return nil, f.err()
	}
	if err := s.writableChannel(c, len(rq.files)); err != nil {
		return nil, err
	}
	key := nonceKey{channelID: c.id, authorID: s.st.botID, nonce: body.nonce()}
	if body.EnforceNonce && key.nonce != "" {
		if prev, ok := s.st.nonces[key]; ok && rq.now.Sub(prev.at) < s.scaled(nonceWindow) {
			if m, ok := s.st.messages[prev.messageID]; ok {
				return s.st.renderMessage(m), nil
			}
		}
	}
	m := s.buildMessage(rq, c, body, s.st.botID)
	if key.nonce != "" {
		s.st.nonces[key] = nonceEntry{messageID: m.id, at: rq.now}
	}
	return s.postMessage(rq, c, m), nil
}

func (s *Server) channelMessage(rq *request, perm uint64) (*channel, *message, *apiError) {
	c, err := s.st.channel(rq.params["channel_id"])
	if err != nil {
		return nil, nil, err
	}
	if err := s.st.requireChannel(c, perm); err != nil {
		return nil, nil, err
	}
	m, err := s.st.message(c, rq.params["message_id"])
	if err != nil {
		return nil, nil, err
	}
	return c, m, nil
}

func getMessage(s *Server, rq *request) (any, *apiError) {
	_, m, err := s.channelMessage(rq, permViewChannel|permReadMessageHistory)
	if err != nil {
		return nil, err
	}
	return s.st.readMessage(m), nil
}

func editMessage(s *Server, rq *request) (any, *apiError) {
	_, m, err := s.channelMessage(rq, permViewChannel)
	if err != nil {
		return nil, err
	}
	body, err := rq.decodeMessage(false, s.st.uploadLimit(m.guildID))
	if err != nil {
		return nil, err
	}
	if m.authorID != s.st.botID || m.webhookID != "" {
		return nil, errEditOthers
	}
	if c := s.st.channels[m.channelID]; c.isThread() && c.archived {
		return nil, errThreadArchived // 50083: "such as editing a message"
	}
	s.applyEdit(rq, m, body)
	return s.emitUpdate(rq, m), nil
}

func (s *Server) emitUpdate(rq *request, m *message) map[string]any {
	if m.flags&flagEphemeral == 0 {
		s.emitMessage(rq, "MESSAGE_UPDATE", m)
	}
	return s.st.renderMessage(m)
}

func deleteMessage(s *Server, rq *request) (any, *apiError) {
	c, m, err := s.channelMessage(rq, permViewChannel)
	if err != nil {
		return nil, err
	}
	if m.authorID != s.st.botID || m.webhookID != "" {
		if err := s.st.requireChannel(c, permManageMessages); err != nil {
			return nil, err
		}
	}
	s.deleteMessageEmit(rq, m)
	return nil, nil
}

func (s *Server) deleteMessageEmit(rq *request, m *message) {
	s.st.deleteMessage(m)
	if m.flags&flagEphemeral != 0 {
		return
	}
	rq.emit(m.guildID, "MESSAGE_DELETE", withGuild(map[string]any{"id": m.id, "channel_id": m.channelID}, m.guildID))
}

// withGuild adds guild_id to an event payload, unless the event is in a DM.
func withGuild(ev map[string]any, guildID string) map[string]any {
	if guildID != "" {
		ev["guild_id"] = guildID
	}
	return ev
}

// listMessages pages through a channel newest first, with before, after
// or around (only the first present counts) and limit 1–100, default 50.
// Without Read Message History the page is empty, as Discord documents.
func listMessages(s *Server, rq *request) (any, *apiError) {
	c, err := s.visibleChannel(rq)
	if err != nil {
		return nil, err
	}
	q := rq.r.URL.Query()
	limit, err := queryInt(q.Get("limit"), "limit", 50, 1, 100)
	if err != nil {
		return nil, err
	}
	page := pageMessages(c.messages, q.Get("before"), q.Get("after"), q.Get("around"), limit)
	if s.st.requireChannel(c, permReadMessageHistory) != nil {
		page = nil
	}
	out := make([]any, 0, len(page))
	for i := len(page) - 1; i >= 0; i-- {
		out = append(out, s.st.readMessage(page[i]))
	}
	return out, nil
}

// pageMessages selects from msgs (ascending) the page Discord returns, in
// ascending order.
func pageMessages(msgs []*message, before, after, around string, limit int) []*message {
	switch {
	case before != "":
		end := 0
		for end < len(msgs) && snowflakeLess(msgs[end].id, before) {
			end++
		}
		return msgs[max(0, end-limit):end]
	case after != "":
		start := 0
		for start < len(msgs) && !snowflakeLess(after, msgs[start].id) {
			start++
		}
		return msgs[start:min(len(msgs), start+limit)]
	case around != "":
		mid := 0
		for mid < len(msgs) && snowflakeLess(msgs[mid].id, around) {
			mid++
		}
		start := max(0, mid-limit/2)
		end := min(len(msgs), start+limit)
		start = max(0, end-limit)
		return msgs[start:end]
	}
	return msgs[max(0, len(msgs)-limit):]
}
