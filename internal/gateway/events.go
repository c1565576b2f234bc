package gateway

import (
	"slices"
	"sync"
	"time"
)

// Events collects the features' handlers of gateway events other than
// interactions — a deleted message or role — before the session opens.
// A handler is a func(*discordgo.Session, *discordgo.<Event>), as
// discordgo's AddHandler takes it; it runs on its own goroutine and
// should only record what happened (the gateway delivers each event at
// most once, so anything that must not be lost is also checked when
// herald next touches the object).
type Events struct {
	mu       sync.Mutex
	handlers []any
	member   []func(Member)
}

// Member is a member's roles from GUILD_MEMBER_UPDATE, which Discord
// sends only with the Server Members intent. Discord took them at most its
// delivery delay before the handler ran, less Age: zero for an event
// herald had live, else how long before it herald last heard the
// connection whose loss Discord made up for by replaying the event on
// RESUME (replay.go).
type Member struct {
	GuildID, UserID string
	Roles           []string
	Age             time.Duration
}

// OnMember adds a handler of member updates that need to know how old
// they may be.
func (e *Events) OnMember(handler func(Member)) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.member = append(e.member, handler)
}

// On adds a handler.
func (e *Events) On(handler any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.handlers = append(e.handlers, handler)
}

func (e *Events) all() []any {
	if e == nil {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]any(nil), e.handlers...)
}

func (e *Events) members() []func(Member) {
	if e == nil {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.member)
}
