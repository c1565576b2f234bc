package sim

import (
	"net/http"
	"slices"
	"time"
)

// threadBody is the JSON of both thread creates.
type threadBody struct {
	Name                *string `json:"name"`
	Type                *int    `json:"type"`
	AutoArchiveDuration *int    `json:"auto_archive_duration"`
	Invitable           *bool   `json:"invitable"`
	RateLimitPerUser    *int    `json:"rate_limit_per_user"`
}

// validate checks name and archive duration, returning the duration.
func (b *threadBody) validate(f *formErrors) int {
	f.requiredLen("name", b.Name, 1, 100)
	archive := 4320
	if b.AutoArchiveDuration != nil {
		archive = *b.AutoArchiveDuration
		checkAutoArchive(f, archive)
	}
	return archive
}

// createThread starts a thread without a message: private (type 12, the
// default, with invitable) or public (type 11).
func createThread(s *Server, rq *request) (any, *apiError) {
	parent, err := s.st.channel(rq.params["channel_id"])
	if err != nil {
		return nil, err
	}
	var body threadBody
	if err := rq.decode(&body); err != nil {
		return nil, err
	}
	var f formErrors
	archive := body.validate(&f)
	typ := channelPrivateThread
	if body.Type != nil {
		typ = *body.Type
		if typ != channelPublicThread && typ != channelPrivateThread {
			f.add("type", "BASE_TYPE_CHOICES", "Value must be one of {11, 12}.")
		}
	}
	if err := f.err(); err != nil {
		return nil, err
	}
	return s.startThread(rq, parent, &body, typ, archive, s.st.ids.next(rq.now))
}

var errThreadExists = &apiError{status: http.StatusBadRequest, code: 160004, message: "A thread has already been created for this message"}

// createThreadFromMessage starts a public thread on a message. The thread
// takes the message's id, and the message gets the HAS_THREAD flag.
func createThreadFromMessage(s *Server, rq *request) (any, *apiError) {
	parent, err := s.st.channel(rq.params["channel_id"])
	if err != nil {
		return nil, err
	}
	var body threadBody
	if err := rq.decode(&body); err != nil {
		return nil, err
	}
	var f formErrors
	archive := body.validate(&f)
	if err := f.err(); err != nil {
		return nil, err
	}
	if err := s.st.requireChannel(parent, permViewChannel|permReadMessageHistory); err != nil {
		return nil, err
	}
	m, err := s.st.message(parent, rq.params["message_id"])
	if err != nil {
		return nil, err
	}
	if _, exists := s.st.channels[m.id]; exists {
		return nil, errThreadExists
	}
	typ := channelPublicThread
	if parent.typ == channelAnnouncement {
		typ = 10 // announcement thread
	}
	body.Invitable = nil
	out, err := s.startThread(rq, parent, &body, typ, archive, m.id)
	if err == nil {
		m.flags |= flagHasThread
		s.emitMessage(rq, "MESSAGE_UPDATE", m)
	}
	return out, err
}

// startThread checks the parent and the bot's permission to create a
// thread of typ there, then creates it with the bot as owner and member
// and raises THREAD_CREATE.
func (s *Server) startThread(rq *request, parent *channel, body *threadBody, typ, archive int, id string) (any, *apiError) {
	if parent.typ != channelText && parent.typ != channelAnnouncement {
		return nil, errNotThread
	}
	perm := permCreatePrivateThreads
	if typ != channelPrivateThread {
		perm = permCreatePublicThreads
	}
	if err := s.st.requireChannel(parent, perm); err != nil {
		return nil, err
	}
	t := &channel{
		id: id, guildID: parent.guildID, name: *body.Name, typ: typ,
		parentID: parent.id, ownerID: s.st.botID, autoArchive: archive, createdAt: rq.now,
		archivedAt: rq.now, invitable: true,
		threadMembers: map[string]time.Time{s.st.botID: rq.now},
	}
	if body.Invitable != nil {
		t.invitable = *body.Invitable
	}
	if body.RateLimitPerUser != nil {
		t.rateLimitPerUser = *body.RateLimitPerUser
	}
	s.st.channels[t.id] = t
	s.threadActivity(rq, t)
	rendered := s.st.renderChannel(t)
	ev := s.st.renderChannel(t)
	ev["newly_created"] = true
	rq.emit(t.guildID, "THREAD_CREATE", ev)
	rq.status = http.StatusCreated
	return rendered, nil
}

// checkAutoArchive accepts the archive durations, in minutes, that
// Discord offers threads.
func checkAutoArchive(f *formErrors, minutes int) {
	switch minutes {
	case 60, 1440, 4320, 10080:
	default:
		f.add("auto_archive_duration", "BASE_TYPE_CHOICES", "Value must be one of {60, 1440, 4320, 10080}.")
	}
}

// thread finds a thread the bot can see.
func (s *Server) thread(rq *request) (*channel, *apiError) {
	t, err := s.visibleChannel(rq)
	if err != nil {
		return nil, err
	}
	if !t.isThread() {
		return nil, errNotThread
	}
	return t, nil
}

func (s *Server) botCan(c *channel, perm uint64) bool {
	g := s.st.guilds[c.guildID]
	return s.st.channelPermissions(g, s.st.botMember(g), c)&perm == perm
}

// threadMember resolves the thread and the user ("@me" is the bot) of a
// thread-members path. An archived thread's members cannot change.
func (s *Server) threadMember(rq *request) (*channel, string, *apiError) {
	t, err := s.thread(rq)
	if err != nil {
		return nil, "", err
	}
	if t.archived {
		return nil, "", errThreadArchived
	}
	userID := rq.params["user_id"]
	if userID == "@me" {
		userID = s.st.botID
	}
	return t, userID, nil
}

func addThreadMember(s *Server, rq *request) (any, *apiError) {
	t, userID, err := s.threadMember(rq)
	if err != nil {
		return nil, err
	}
	if err := s.st.requireChannel(t, permSendMessagesInThreads); err != nil {
		return nil, err
	}
	if _, ok := s.st.guilds[t.guildID].members[userID]; !ok {
		return nil, errUnknown(codeUnknownMember)
	}
	// Only moderators add others to a private thread that is not invitable.
	if t.typ == channelPrivateThread && !t.invitable && userID != s.st.botID && !s.botCan(t, permManageThreads) {
		return nil, errMissingPermissions
	}
	if _, in := t.threadMembers[userID]; !in {
		t.threadMembers[userID] = rq.now
		rq.emit(t.guildID, "THREAD_MEMBERS_UPDATE", s.threadMembersUpdate(t, []string{userID}, nil))
	}
	return nil, nil
}

func removeThreadMember(s *Server, rq *request) (any, *apiError) {
	t, userID, err := s.threadMember(rq)
	if err != nil {
		return nil, err
	}
	if userID != s.st.botID && !s.botCan(t, permManageThreads) && !(t.typ == channelPrivateThread && t.ownerID == s.st.botID) {
		return nil, errMissingPermissions
	}
	if _, in := t.threadMembers[userID]; !in {
		return nil, errUnknown(codeUnknownMember)
	}
	delete(t.threadMembers, userID)
	rq.emit(t.guildID, "THREAD_MEMBERS_UPDATE", s.threadMembersUpdate(t, nil, []string{userID}))
	return nil, nil
}

func (s *Server) threadMembersUpdate(t *channel, added, removed []string) map[string]any {
	ev := map[string]any{"id": t.id, "guild_id": t.guildID, "member_count": len(t.threadMembers)}
	if len(added) > 0 {
		var list []any
		for _, id := range added {
			list = append(list, map[string]any{"id": t.id, "user_id": id, "join_timestamp": timestamp(t.threadMembers[id]), "flags": 0})
		}
		ev["added_members"] = list
	}
	if len(removed) > 0 {
		ev["removed_member_ids"] = removed
	}
	return ev
}

// modifyThread applies PATCH to a thread. Locking, invitability and slow
// mode need Manage Threads; the owner may rename, archive and unarchive
// its own thread unless it is locked. An archived thread changes only in
// a PATCH that unarchives it (Modify Channel › JSON Params (Thread):
// "Requires the thread to have archived set to false or be set to false
// in the request"); anything else answers 50083.
func (s *Server) modifyThread(rq *request, t *channel, body channelBody) (any, *apiError) {
	var f formErrors
	if body.Name != nil {
		f.between("name", len([]rune(*body.Name)), 1, 100)
	}
	if body.AutoArchiveDuration != nil {
		checkAutoArchive(&f, *body.AutoArchiveDuration)
	}
	if err := f.err(); err != nil {
		return nil, err
	}
	if err := s.st.requireChannel(t, permViewChannel); err != nil {
		return nil, err
	}
	manage := s.botCan(t, permManageThreads)
	owner := t.ownerID == s.st.botID
	if !manage && (body.Locked != nil || body.Invitable != nil || body.RateLimitPerUser != nil || !owner) {
		return nil, errMissingPermissions
	}
	if !manage && t.locked && t.archived {
		return nil, errThreadArchived
	}
	if t.archived && (body.Archived == nil || *body.Archived) {
		return nil, errThreadArchived
	}
	if body.Name != nil {
		t.name = *body.Name
	}
	if body.Locked != nil {
		t.locked = *body.Locked
	}
	if body.Invitable != nil {
		t.invitable = *body.Invitable
	}
	if body.RateLimitPerUser != nil {
		t.rateLimitPerUser = *body.RateLimitPerUser
	}
	switch {
	case body.Archived != nil && *body.Archived != t.archived && t.archived:
		s.unarchiveThread(rq, t, false)
	case body.Archived != nil && *body.Archived != t.archived:
		s.archiveThread(rq, t, rq.now, false)
	}
	// A new auto-archive duration is activity, and moves the archive
	// timestamp ("Threads" topic › "Thread Fields").
	if body.AutoArchiveDuration != nil && *body.AutoArchiveDuration != t.autoArchive {
		t.autoArchive = *body.AutoArchiveDuration
		t.archivedAt = rq.now
		if !t.archived {
			s.threadActivity(rq, t)
		}
	}
	rendered := s.st.renderChannel(t)
	rq.emit(t.guildID, "THREAD_UPDATE", rendered)
	return rendered, nil
}

// listActiveThreads is GET /guilds/{guild_id}/threads/active: every
// unarchived thread of the guild the bot can see (a private one only as
// a member or with Manage Threads), newest first, with a thread member
// object for each the bot has joined. Discord returns them in one page,
// so has_more is always false.
func listActiveThreads(s *Server, rq *request) (any, *apiError) {
	g, err := s.st.guild(rq.params["guild_id"])
	if err != nil {
		return nil, err
	}
	var active []*channel
	for _, c := range s.st.channels {
		if c.guildID == g.id && c.isThread() && !c.archived && s.st.requireChannel(c, permViewChannel) == nil {
			active = append(active, c)
		}
	}
	slices.SortFunc(active, func(a, b *channel) int { return -compareSnowflakes(a.id, b.id) })
	threads, members := []any{}, []any{}
	for _, c := range active {
		threads = append(threads, s.st.renderChannel(c))
		if joined, in := c.threadMembers[s.st.botID]; in {
			members = append(members, map[string]any{"id": c.id, "user_id": s.st.botID, "join_timestamp": timestamp(joined), "flags": 0})
		}
	}
	return map[string]any{"threads": threads, "members": members, "has_more": false}, nil
}
