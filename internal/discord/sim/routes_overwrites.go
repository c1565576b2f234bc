package sim

import (
	"net/http"
	"slices"
)

var errChannelType = &apiError{status: http.StatusBadRequest, code: codeInvalidThreadChannel, message: "Cannot execute action on this channel type"}

// overwriteChannel resolves a guild channel whose overwrites the bot may
// edit: Manage Roles in the channel. Threads and DMs have no overwrites.
func (s *Server) overwriteChannel(rq *request) (*guild, *channel, *apiError) {
	c, err := s.st.channel(rq.params["channel_id"])
	if err != nil {
		return nil, nil, err
	}
	if c.isThread() || c.typ == channelDM {
		return nil, nil, errChannelType
	}
	if err := s.st.requireChannel(c, permManageRoles); err != nil {
		return nil, nil, err
	}
	return s.st.guilds[c.guildID], c, nil
}

// putOverwrite is Edit Channel Permissions: creates or replaces the
// overwrite of a role (type 0) or member (type 1). The bot can only allow
// or deny permissions it holds itself (50013). Raises CHANNEL_UPDATE.
func putOverwrite(s *Server, rq *request) (any, *apiError) {
	g, c, err := s.overwriteChannel(rq)
	if err != nil {
		return nil, err
	}
	var body struct {
		Type  *int      `json:"type"`
		Allow *flexUint `json:"allow"`
		Deny  *flexUint `json:"deny"`
	}
	if err := rq.decode(&body); err != nil {
		return nil, err
	}
	var f formErrors
	switch {
	case body.Type == nil:
		f.required("type")
	case *body.Type != 0 && *body.Type != 1:
		f.add("type", "BASE_TYPE_CHOICES", "Value must be one of {0, 1}.")
	}
	if err := f.err(); err != nil {
		return nil, err
	}
	o := overwriteBody{ID: rq.params["overwrite_id"], Type: *body.Type}
	if body.Allow != nil {
		o.Allow = *body.Allow
	}
	if body.Deny != nil {
		o.Deny = *body.Deny
	}
	ows, err := s.toOverwrites(g, c, []overwriteBody{o})
	if err != nil {
		return nil, err
	}
	if _, ok := g.roles[o.ID]; o.Type == 0 && !ok {
		return nil, errUnknown(codeUnknownRole)
	}
	if _, ok := s.st.users[o.ID]; o.Type == 1 && !ok {
		return nil, errUnknown(codeUnknownUser)
	}
	i := slices.IndexFunc(c.overwrites, func(x overwrite) bool { return x.id == o.ID })
	if i < 0 {
		c.overwrites = append(c.overwrites, ows[0])
	} else {
		c.overwrites[i] = ows[0]
	}
	rq.emit(g.id, "CHANNEL_UPDATE", s.st.renderChannel(c))
	return nil, nil
}

// deleteOverwrite is Delete Channel Permission: 10009 when the channel has
// no overwrite for that id. Raises CHANNEL_UPDATE.
func deleteOverwrite(s *Server, rq *request) (any, *apiError) {
	g, c, err := s.overwriteChannel(rq)
	if err != nil {
		return nil, err
	}
	id := rq.params["overwrite_id"]
	if !slices.ContainsFunc(c.overwrites, func(x overwrite) bool { return x.id == id }) {
		return nil, errUnknown(codeUnknownOverwrite)
	}
	c.overwrites = slices.DeleteFunc(c.overwrites, func(x overwrite) bool { return x.id == id })
	rq.emit(g.id, "CHANNEL_UPDATE", s.st.renderChannel(c))
	return nil, nil
}
