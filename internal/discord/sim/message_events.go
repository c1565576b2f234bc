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
// without the Message Content intent get content, embeds, attachments and
// components emptied, except where Discord's "Message Content Intent" docs
// keep them: in DMs, in the app's own messages and in messages that
// mention the app.
func (s *Server) emitMessage(rq *request, typ string, m *message) {
	ev := s.st.messageEvent(m)
	d := dispatch{guildID: m.guildID, typ: typ, data: ev}
	if !s.st.contentVisible(m) {
		blank := s.st.messageEvent(m)
		blank["content"] = ""
		blank["embeds"] = []any{}
		blank["attachments"] = []any{}
		blank["components"] = []any{}
		d.withoutContent = blank
	}
	rq.events = append(rq.events, d)
}

// contentVisible reports whether Discord shows m's content to the bot even
// without the Message Content intent.
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
