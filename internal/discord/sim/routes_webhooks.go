package sim

import (
	"crypto/md5"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strings"
	"time"
)

func newToken() string {
	b := make([]byte, 32)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// createWebhook is POST /channels/{channel_id}/webhooks: the webhook
// with its token, and WEBHOOKS_UPDATE for the channel.
func createWebhook(s *Server, rq *request) (any, *apiError) {
	c, err := s.st.channel(rq.params["channel_id"])
	if err != nil {
		return nil, err
	}
	var body struct {
		Name *string `json:"name"`
	}
	if err := rq.decode(&body); err != nil {
		return nil, err
	}
	var f formErrors
	f.requiredLen("name", body.Name, 1, 80)
	if body.Name != nil {
		webhookName(&f, "name", *body.Name)
	}
	if err := f.err(); err != nil {
		return nil, err
	}
	if err := s.st.requireChannel(c, permManageWebhooks); err != nil {
		return nil, err
	}
	n := 0
	for _, w := range s.st.webhooks {
		if w.channelID == c.id {
			n++
		}
	}
	if n >= maxChannelWebhooks {
		return nil, errMaxWebhooks
	}
	w := &webhook{id: s.st.ids.next(rq.now), token: newToken(), name: *body.Name, channelID: c.id, guildID: c.guildID, creatorID: s.st.botID}
	s.st.webhooks[w.id] = w
	rq.emit(c.guildID, "WEBHOOKS_UPDATE", map[string]any{"guild_id": c.guildID, "channel_id": c.id})
	return s.st.renderWebhook(w, true), nil
}

func listWebhooks(s *Server, rq *request) (any, *apiError) {
	c, err := s.st.channel(rq.params["channel_id"])
	if err != nil {
		return nil, err
	}
	if err := s.st.requireChannel(c, permManageWebhooks); err != nil {
		return nil, err
	}
	out := []any{}
	for _, w := range s.st.webhooks {
		if w.channelID == c.id {
			out = append(out, s.st.renderWebhook(w, true))
		}
	}
	return out, nil
}

// forbiddenInNames are what a webhook's name may not contain, in any case
// (Webhook, "Create Webhook"); an execute's username override is held to
// the same rule.
var forbiddenInNames = []string{"clyde", "discord"}

// webhookName checks a webhook name for the substrings Discord refuses,
// with the error it answers: USERNAME_INVALID_CONTAINS, `Username cannot
// contain "discord"`.
func webhookName(f *formErrors, field, name string) {
	lower := strings.ToLower(name)
	for _, word := range forbiddenInNames {
		if strings.Contains(lower, word) {
			f.add(field, "USERNAME_INVALID_CONTAINS", `Username cannot contain "`+word+`"`)
			return
		}
	}
}

// webhookUsername checks an execute's username override: 1 to 80
// characters, none of the forbidden substrings.
func webhookUsername(username *string) *apiError {
	if username == nil {
		return nil
	}
	var f formErrors
	f.between("username", len([]rune(*username)), 1, 80)
	webhookName(&f, "username", *username)
	return f.err()
}

// webhookChannel keys the per-channel webhook limit that every webhook in
// a channel shares.
func webhookChannel(st *state, p map[string]string) string {
	if w, ok := st.webhooks[p["webhook_id"]]; ok {
		return w.channelID
	}
	return ""
}

// lookupWebhook authenticates a webhook by id and token: 10015 for an
// unknown id, 50027 for a wrong token.
func (s *Server) lookupWebhook(rq *request) (*webhook, *apiError) {
	w, ok := s.st.webhooks[rq.params["webhook_id"]]
	if !ok {
		return nil, errUnknown(codeUnknownWebhook)
	}
	if w.token != rq.params["webhook_token"] {
		return nil, errInvalidToken
	}
	return w, nil
}

// getWebhook is GET /webhooks/{webhook_id}: the webhook with its creator,
// for a bot with Manage Webhooks in its channel.
func getWebhook(s *Server, rq *request) (any, *apiError) {
	w, ok := s.st.webhooks[rq.params["webhook_id"]]
	if !ok {
		return nil, errUnknown(codeUnknownWebhook)
	}
	if err := s.st.requireChannel(s.st.channels[w.channelID], permManageWebhooks); err != nil {
		return nil, err
	}
	return s.st.renderWebhook(w, true), nil
}

// deleteWebhook is DELETE /webhooks/{webhook_id}, for a bot with Manage
// Webhooks in its channel: 204, and WEBHOOKS_UPDATE for the channel.
// Its token stops working at once (10015 Unknown Webhook).
func deleteWebhook(s *Server, rq *request) (any, *apiError) {
	w, ok := s.st.webhooks[rq.params["webhook_id"]]
	if !ok {
		return nil, errUnknown(codeUnknownWebhook)
	}
	c := s.st.channels[w.channelID]
	if err := s.st.requireChannel(c, permManageWebhooks); err != nil {
		return nil, err
	}
	delete(s.st.webhooks, w.id)
	rq.emit(c.guildID, "WEBHOOKS_UPDATE", map[string]any{"guild_id": c.guildID, "channel_id": c.id})
	return nil, nil
}

// modifyWebhook is PATCH /webhooks/{webhook_id} (Modify Webhook): a new
// name, or a move to another channel of the guild (channel_id), for a bot
// with Manage Webhooks in the webhook's channel and in the new one.
// WEBHOOKS_UPDATE goes out for each channel concerned.
func modifyWebhook(s *Server, rq *request) (any, *apiError) {
	w, ok := s.st.webhooks[rq.params["webhook_id"]]
	if !ok {
		return nil, errUnknown(codeUnknownWebhook)
	}
	var body struct {
		Name      *string `json:"name"`
		ChannelID *string `json:"channel_id"`
	}
	if err := rq.decode(&body); err != nil {
		return nil, err
	}
	var f formErrors
	if body.Name != nil {
		f.between("name", len([]rune(*body.Name)), 1, 80)
		webhookName(&f, "name", *body.Name)
	}
	if err := f.err(); err != nil {
		return nil, err
	}
	from := s.st.channels[w.channelID]
	if err := s.st.requireChannel(from, permManageWebhooks); err != nil {
		return nil, err
	}
	to := from
	if body.ChannelID != nil {
		c, err := s.st.channel(*body.ChannelID)
		if err != nil {
			return nil, err
		}
		if c.guildID != w.guildID {
			f.add("channel_id", "BASE_TYPE_CHOICES", "Value is not a channel of this guild.")
			return nil, f.err()
		}
		if err := s.st.requireChannel(c, permManageWebhooks); err != nil {
			return nil, err
		}
		to = c
	}
	if body.Name != nil {
		w.name = *body.Name
	}
	w.channelID = to.id
	for _, c := range []*channel{from, to} {
		rq.emit(c.guildID, "WEBHOOKS_UPDATE", map[string]any{"guild_id": c.guildID, "channel_id": c.id})
		if to == from {
			break
		}
	}
	return s.st.renderWebhook(w, true), nil
}

// getWebhookWithToken is GET /webhooks/{webhook_id}/{webhook_token}: no
// authentication, and no user in the answer.
func getWebhookWithToken(s *Server, rq *request) (any, *apiError) {
	w, err := s.lookupWebhook(rq)
	if err != nil {
		return nil, err
	}
	return s.st.renderWebhook(w, false), nil
}

// webhookTarget is the channel a webhook request addresses: the webhook's
// own, or the thread of it that thread_id names (10003 for any other).
func (s *Server) webhookTarget(rq *request, w *webhook) (*channel, *apiError) {
	tid := rq.r.URL.Query().Get("thread_id")
	if tid == "" {
		return s.st.channels[w.channelID], nil
	}
	t, ok := s.st.channels[tid]
	if !ok || !t.isThread() || t.parentID != w.channelID {
		return nil, errUnknown(codeUnknownChannel)
	}
	return t, nil
}

// executeWebhook posts as the webhook, under the username and avatar_url
// the body overrides, into its channel or one of its threads (which
// unarchives). wait=true answers the message, otherwise 204.
func executeWebhook(s *Server, rq *request) (any, *apiError) {
	if rq.params["webhook_id"] == s.st.appID {
		return s.followUp(rq)
	}
	w, err := s.lookupWebhook(rq)
	if err != nil {
		return nil, err
	}
	body, err := rq.decodeMessage(true, s.st.uploadLimit(w.guildID))
	if err != nil {
		return nil, err
	}
	if err := webhookUsername(body.Username); err != nil {
		return nil, err
	}
	rendered, err := s.postAsWebhook(rq, w, body)
	if err != nil || rq.r.URL.Query().Get("wait") != "true" {
		return nil, err
	}
	return rendered, nil
}

// Discord's answers to a webhook message that names its thread wrongly
// for its channel (Execute Webhook; JSON error codes 220001-220003).
var (
	errForumNeedsThread  = &apiError{status: http.StatusBadRequest, code: 220001, message: "Webhooks posted to forum channels must have a thread_name or thread_id"}
	errForumBothThreads  = &apiError{status: http.StatusBadRequest, code: 220002, message: "Webhooks posted to forum channels cannot have both a thread_name and thread_id"}
	errThreadNameOutside = &apiError{status: http.StatusBadRequest, code: 220003, message: "Webhooks can only create threads in forum channels"}
)

// postAsWebhook posts body as w, under the username and avatar_url it
// overrides, into w's channel or the thread thread_id names; in a forum
// channel, into the thread thread_id names or a new post thread_name
// names, one of which it must have.
func (s *Server) postAsWebhook(rq *request, w *webhook, body *messageBody) (any, *apiError) {
	forum := s.st.channels[w.channelID].typ == channelForum
	byID := rq.r.URL.Query().Get("thread_id") != ""
	switch {
	case !forum && body.ThreadName != nil:
		return nil, errThreadNameOutside
	case forum && byID && body.ThreadName != nil:
		return nil, errForumBothThreads
	case forum && !byID && body.ThreadName == nil:
		return nil, errForumNeedsThread
	}
	var f formErrors
	if body.ThreadName != nil {
		f.requiredLen("thread_name", body.ThreadName, 1, 100)
	}
	if err := f.err(); err != nil {
		return nil, err
	}
	c, err := s.webhookTarget(rq, w)
	if err != nil {
		return nil, err
	}
	m := s.buildMessage(rq, c, body, w.id)
	if body.ThreadName != nil {
		c = s.forumPost(rq, c, *body.ThreadName, w.id, m.id)
		m.channelID = c.id
	}
	m.webhookID = w.id
	if body.Username != nil {
		m.username = *body.Username
	}
	if body.AvatarURL != "" {
		// Discord fetches the image and keeps it as an avatar hash.
		sum := md5.Sum([]byte(body.AvatarURL))
		m.avatar = hex.EncodeToString(sum[:])
	}
	return s.postMessage(rq, c, m), nil
}

// executeSlackWebhook is Discord's Slack-compatible execute: text,
// username and icon_url become the message's content, author name and
// avatar (Slack attachments are not rendered here). Discord answers 200
// with the JSON string "ok", whatever wait says.
func executeSlackWebhook(s *Server, rq *request) (any, *apiError) {
	w, err := s.lookupWebhook(rq)
	if err != nil {
		return nil, err
	}
	var slack struct {
		Text     *string `json:"text"`
		Username *string `json:"username"`
		IconURL  string  `json:"icon_url"`
	}
	if err := rq.decode(&slack); err != nil {
		return nil, err
	}
	body := &messageBody{Content: slack.Text, Username: slack.Username, AvatarURL: slack.IconURL}
	if err := body.validate("", 0, true); err != nil {
		return nil, err
	}
	if err := webhookUsername(body.Username); err != nil {
		return nil, err
	}
	if _, err := s.postAsWebhook(rq, w, body); err != nil {
		return nil, err
	}
	return "ok", nil
}

// webhookMessage finds a message sent by the webhook (or, for the
// application id, by the interaction) that the path names; a message in a
// thread is found only with that thread's thread_id.
func (s *Server) webhookMessage(rq *request) (*message, *apiError) {
	if rq.params["webhook_id"] == s.st.appID {
		return s.interactionMessage(rq)
	}
	w, err := s.lookupWebhook(rq)
	if err != nil {
		return nil, err
	}
	c, err := s.webhookTarget(rq, w)
	if err != nil {
		return nil, err
	}
	m, ok := s.st.messages[rq.params["message_id"]]
	if !ok || m.webhookID != w.id || m.channelID != c.id {
		return nil, errUnknown(codeUnknownMessage)
	}
	return m, nil
}

func getWebhookMessage(s *Server, rq *request) (any, *apiError) {
	m, err := s.webhookMessage(rq)
	if err != nil {
		return nil, err
	}
	return s.st.renderMessage(m), nil
}

func editWebhookMessage(s *Server, rq *request) (any, *apiError) {
	m, err := s.webhookMessage(rq)
	if err != nil {
		return nil, err
	}
	body, err := rq.decodeMessage(false, s.st.uploadLimit(m.guildID))
	if err != nil {
		return nil, err
	}
	m.flags &^= flagLoading
	s.applyEdit(rq, m, body)
	return s.emitUpdate(rq, m), nil
}

func deleteWebhookMessage(s *Server, rq *request) (any, *apiError) {
	m, err := s.webhookMessage(rq)
	if err != nil {
		return nil, err
	}
	s.deleteMessageEmit(rq, m)
	return nil, nil
}

// githubEvents are the X-GitHub-Event values Discord posts a message for
// (docs: Execute GitHub-Compatible Webhook); it answers 204 to others and
// posts nothing.
var githubEvents = map[string]bool{
	"commit_comment": true, "create": true, "delete": true, "fork": true, "issue_comment": true, "issues": true,
	"member": true, "public": true, "pull_request": true, "pull_request_review": true, "pull_request_review_comment": true,
	"push": true, "release": true, "watch": true, "check_run": true, "check_suite": true, "discussion": true, "discussion_comment": true,
}

// executeGitHubWebhook is Discord's GitHub-compatible execute. Discord
// renders each event as an embed of its own wording; the simulator posts
// one embed titled "[<repository>] <event>", enough to tell which event
// arrived from which repository.
func executeGitHubWebhook(s *Server, rq *request) (any, *apiError) {
	w, err := s.lookupWebhook(rq)
	if err != nil {
		return nil, err
	}
	var gh struct {
		Repository struct {
			FullName string `json:"full_name"`
		} `json:"repository"`
	}
	if err := rq.decode(&gh); err != nil {
		return nil, err
	}
	event := rq.r.Header.Get("X-GitHub-Event")
	if !githubEvents[event] {
		return nil, nil
	}
	title := "[" + gh.Repository.FullName + "] " + event
	embeds := []any{map[string]any{"title": title}}
	if _, err := s.postAsWebhook(rq, w, &messageBody{Embeds: &embeds}); err != nil {
		return nil, err
	}
	return nil, nil
}

// forumPost opens a post in forum: a public thread named name, owned by
// ownerID, whose id is its first message's (Discord's forum posts share
// the id of their starter message).
func (s *Server) forumPost(rq *request, forum *channel, name, ownerID, id string) *channel {
	t := &channel{
		id: id, guildID: forum.guildID, name: name, typ: channelPublicThread,
		parentID: forum.id, ownerID: ownerID, autoArchive: 4320, createdAt: rq.now,
		archivedAt: rq.now, invitable: true, threadMembers: map[string]time.Time{},
	}
	s.st.channels[t.id] = t
	ev := s.st.renderChannel(t)
	ev["newly_created"] = true
	rq.emit(t.guildID, "THREAD_CREATE", ev)
	return t
}
