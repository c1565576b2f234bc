package gateway

import "sync"

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
