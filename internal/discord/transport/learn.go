package transport

import "time"

// A global 429 says the bot's global limit is lower than herald counts
// on: Discord lowers it for a bot during an incident, and another program
// on the token takes part of it. Sending at the full rate again once the
// gate reopens earns another global 429 every retry_after, each an
// invalid request toward Discord's ban. So a global 429 halves the rate
// (what the process sent in the last period), and the rate probes back
// up, doubling after every probePeriods periods without a global 429, to
// the configured limit: a storm at a rate of 1 costs one 429 a probe.
const probePeriods = 5

// learnedGlobal is the global rate the last global 429 left.
type learnedGlobal struct {
	cut int       // the rate it set; 0: no global 429 yet
	at  time.Time // when
}

// limit is the rate learned at now: full when nothing was learned or the
// probes reached it.
func (l learnedGlobal) limit(now time.Time, full int, period time.Duration) int {
	if l.cut == 0 {
		return full
	}
	n, step := l.cut, probePeriods*period
	for t := l.at.Add(step); !t.After(now) && n < full; t = t.Add(step) {
		n *= 2
	}
	return min(n, full)
}

// learn records a global 429 at now, when sent requests went out in the
// last period. The 429s of one excess — every request in flight when
// Discord's window filled — cut once: a second cut within a period of
// the first is skipped.
func (l *learnedGlobal) learn(now time.Time, sent, full int, period time.Duration) {
	if l.cut != 0 && now.Sub(l.at) < period {
		return
	}
	*l = learnedGlobal{cut: max(1, min(sent, l.limit(now, full, period))/2), at: now}
}
