package gateway

import (
	"sync"
	"time"
)

// replayGrace is how long after RESUMED an event may still be one Discord
// replayed: discordgo hands each event to its handlers on a goroutine of
// its own, so a replayed event's handler can run a little after RESUMED
// has been read.
const replayGrace = 10 * time.Second

// replay tells the events Discord replays on RESUME — sent while the
// connection was down, possibly long before herald handles them — from
// the ones it has live. An event dispatched after the last frame herald
// heard on the lost connection was taken no earlier than Discord's
// delivery delay before that frame, so that frame's time is how old a
// replayed event's payload may be.
type replay struct {
	mu   sync.Mutex
	from time.Time // the last frame heard before the loss; zero: nothing replayed
	live time.Time // from then events are live again; zero while resuming
}

// resuming notes a RESUME after a connection whose last frame came at
// heard. A failed RESUME leaves the first loss's time in place.
func (r *replay) resuming(heard, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.from.IsZero() || !r.live.IsZero() && !now.Before(r.live) {
		r.from = heard
	}
	r.live = time.Time{}
}

// identifying notes a new session: Discord replays nothing to it.
func (r *replay) identifying() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.from, r.live = time.Time{}, time.Time{}
}

// resumed notes RESUMED, read at now: the replay is over.
func (r *replay) resumed(now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.live = now.Add(replayGrace)
}

// age is how much older than now an event handled at now may be: zero
// when it is live, else the time since the last frame heard before the
// loss.
func (r *replay) age(now time.Time) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.from.IsZero() || !r.live.IsZero() && !now.Before(r.live) {
		return 0
	}
	return now.Sub(r.from)
}
