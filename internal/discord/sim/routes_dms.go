package sim

// createDM is POST /users/@me/channels: the DM channel with a user, the
// same one on every call. Opening it always works; whether the user
// accepts messages is decided when one is sent (50007).
func createDM(s *Server, rq *request) (any, *apiError) {
	var body struct {
		RecipientID *string `json:"recipient_id"`
	}
	if err := rq.decode(&body); err != nil {
		return nil, err
	}
	if body.RecipientID == nil {
		var f formErrors
		f.required("recipient_id")
		return nil, f.err()
	}
	id := *body.RecipientID
	if _, ok := s.st.users[id]; !ok || id == s.st.botID {
		return nil, errUnknown(codeUnknownUser)
	}
	if cid, ok := s.st.dms[id]; ok {
		return s.st.renderChannel(s.st.channels[cid]), nil
	}
	c := &channel{id: s.st.ids.next(rq.now), typ: channelDM, recipientID: id}
	s.st.channels[c.id] = c
	s.st.dms[id] = c.id
	return s.st.renderChannel(c), nil
}
