// Package demo is `herald demo`: a scripted day on a busy server, played
// against the Discord simulator with herald running as a child process,
// then checked against the simulator's final state. The story is seed
// 000's: an admin edits several role menus in quick succession while
// members click them, open tickets and have them closed with transcripts,
// and monitoring services push notifications through the webhook proxy —
// with a window of Discord 5xx errors, a 429 storm and a kill -9 of herald
// in the middle.
package demo

import (
	"errors"
	"fmt"
	"time"
)

// Scenario is the size and timing of one run. Times are wall-clock, from
// the end of the setup; the simulator runs at TimeScale, so Discord's
// windows, deadlines and token lifetimes are that much shorter.
type Scenario struct {
	Members         int // members clicking role menus
	ClicksPerMember int // clicks each member makes in quick succession
	Menus           int // role menus, 3 options each (at most len(menuTopics))
	EditsPerMenu    int // label edits the admin makes to each menu
	Tickets         int // members opening a ticket, each double-clicking
	Closes          int // tickets staff close, each with a transcript
	Notifications   int // webhook notifications through the proxy
	Services        int // monitoring services, each with its own webhook and channel

	TimeScale float64
	// Span is how long members, openers and services take to send their
	// part; each lane spreads its work evenly over it.
	Span time.Duration

	// FaultAt and FaultFor place the window in which Discord answers
	// FaultRate of the bot's REST requests (interaction answers spared)
	// with 503.
	FaultAt, FaultFor time.Duration
	FaultRate         float64
	// StormAt and StormFor place a 429 storm: the simulator's global limit
	// drops to StormGlobal requests per (scaled) second.
	StormAt, StormFor time.Duration
	StormGlobal       int
	// KillAt is when herald gets kill -9; it is restarted at once.
	KillAt time.Duration
	// Drain bounds the wait, after the last work was sent, for herald to
	// finish it.
	Drain time.Duration
	// Seed picks the members' clicks.
	Seed uint64
}

// Default is the full story `herald demo` plays.
func Default() Scenario {
	return Scenario{
		Members: 200, ClicksPerMember: 2, Menus: 5, EditsPerMenu: 4, Tickets: 50, Closes: 30,
		Notifications: 5000, Services: 25,
		TimeScale: 0.1, Span: 50 * time.Second,
		FaultAt: 10 * time.Second, FaultFor: 20 * time.Second, FaultRate: 0.5,
		StormAt: 33 * time.Second, StormFor: 3 * time.Second, StormGlobal: 1,
		KillAt: 40 * time.Second, Drain: 100 * time.Second, Seed: 0,
	}
}

// Validate reports every setting out of range at once.
func (s Scenario) Validate() error {
	var errs []error
	check := func(ok bool, format string, args ...any) {
		if !ok {
			errs = append(errs, fmt.Errorf(format, args...))
		}
	}
	check(s.Members >= 1 && s.Members <= 1000, "members must be from 1 to 1000, got %d", s.Members)
	check(s.ClicksPerMember >= 1 && s.ClicksPerMember <= 10, "clicks per member must be from 1 to 10, got %d", s.ClicksPerMember)
	check(s.Menus >= 1 && s.Menus <= len(menuTopics), "menus must be from 1 to %d, got %d", len(menuTopics), s.Menus)
	check(s.EditsPerMenu >= 1 && s.EditsPerMenu <= 20, "edits per menu must be from 1 to 20, got %d", s.EditsPerMenu)
	check(s.Tickets >= 1 && s.Tickets <= s.Members, "tickets must be from 1 to the members (%d), got %d", s.Members, s.Tickets)
	check(s.Closes >= 0 && s.Closes <= s.Tickets, "closes must be from 0 to the tickets (%d), got %d", s.Tickets, s.Closes)
	check(s.Notifications >= 1 && s.Notifications <= 50_000, "notifications must be from 1 to 50000, got %d", s.Notifications)
	check(s.Services >= 1 && s.Services <= 50 && s.Services <= s.Notifications, "services must be from 1 to 50 and at most the notifications, got %d", s.Services)
	check(s.TimeScale >= 0.01 && s.TimeScale <= 1, "time scale must be from 0.01 to 1, got %v", s.TimeScale)
	check(s.Span >= time.Second && s.Span <= 10*time.Minute, "span must be from 1s to 10m, got %s", s.Span)
	check(s.FaultAt >= 0 && s.FaultFor >= 0 && s.FaultRate >= 0 && s.FaultRate < 1, "the 5xx window needs non-negative times and a rate in [0, 1)")
	check(s.StormAt >= 0 && s.StormFor >= 0 && s.StormGlobal >= 1, "the 429 storm needs non-negative times and a global limit of at least 1")
	check(s.KillAt >= 0, "the kill time must not be negative")
	check(s.Drain >= time.Second, "the drain must be at least 1s, got %s", s.Drain)
	return errors.Join(errs...)
}

// menuTopics are the role menus the demo guild offers, each with its
// three roles; the admin edits the first option's label.
var menuTopics = []struct {
	name  string
	roles [3]string
}{
	{"games", [3]string{"Chess", "Go", "Poker"}},
	{"languages", [3]string{"English", "Deutsch", "Français"}},
	{"regions", [3]string{"Europe", "Asia", "Americas"}},
	{"pings", [3]string{"Announcements", "Events", "Streams"}},
	{"crafts", [3]string{"Drawing", "Music", "Writing"}},
}
