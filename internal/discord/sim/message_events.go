package sim

import "regexp"

// userMention is a user mention in message content: <@id> or <@!id>.
var userMention = regexp.MustCompile(`<@!?(\d+)>`)

// mentionedUsers lists the known users that content mentions, once each,
// in order, as the message's mentions array does.
func (s *state) mentionedUsers(content string) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range userMention.FindAllStringSubmatch(content, -1) {
		if _, ok := s.users[m[1]]; ok && !seen[m[1]] {
			seen[m[1]] = true
			out = append(out, m[1])
		}
	}
	return out
}

// emitMessage raises MESSAGE_CREATE or MESSAGE_UPDATE for m. Sessions
// without the Message Content intent get it without its content (see
// contentVisible).
func (s *Server) emitMessage(rq *request, typ string, m *message) {
	ev := s.st.messageEvent(m)
	d := dispatch{guildID: m.guildID, typ: typ, data: ev}
	if !s.st.contentVisible(m) {
		blank := s.st.messageEvent(m)
		blankContent(blank)
		d.withoutContent = blank
	}
	rq.events = append(rq.events, d)
}

// readMessage is m as the bot reads it over REST: without its content
// when the application lacks the Message Content intent (see
// contentVisible).
func (s *state) readMessage(m *message) map[string]any {
	out := s.renderMessage(m)
	if !s.hasMessageContent() && !s.contentVisible(m) {
		blankContent(out)
	}
	return out
}

// blankContent empties what Discord withholds from an app without the
// Message Content intent: content, embeds, attachments and components,
// and poll, which is left out.
func blankContent(m map[string]any) {
	m["content"] = ""
	m["embeds"] = []any{}
	m["attachments"] = []any{}
	m["components"] = []any{}
	delete(m, "poll")
}

// contentVisible reports whether Discord shows m's content to the bot even
// without the Message Content intent, as its "Message Content Intent" docs
// say, in gateway events and REST reads alike: in DMs, in the app's own
// messages and in messages that mention the app.
func (s *state) contentVisible(m *message) bool {
	if m.guildID == "" || m.authorID == s.botID {
		return true
	}
	for _, id := range s.mentionedUsers(m.content) {
		if id == s.botID {
			return true
		}
	}
	return false
}

// dispatch sends the events a request raised, once the lock is released.
func (s *Server) dispatch(events []dispatch) {
	for _, ev := range events {
		if ev.withoutContent != nil {
			s.gw.DispatchMessage(ev.guildID, ev.typ, ev.data, ev.withoutContent)
			continue
		}
		s.gw.Dispatch(ev.guildID, ev.typ, ev.data)
	}
}
