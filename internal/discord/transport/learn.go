package transport

import "time"

// A global 429 says the bot's global limit is lower than herald counts
// on: Discord lowers it for a bot during an incident, and another program
// on the token takes part of it. Sending at the full rate again once the
// gate reopens earns another global 429 every retry_after, each an
// invalid request toward Discord's ban. So a global 429 halves the rate
// (what the process sent in the last period), and the rate probes back
// up, doubling after every probePeriods periods without a global 429, to
// the configured limit. A probe that meets a global 429 says the storm
// goes on: the next probes wait twice as long (up to maxProbePeriods),
// as TCP backs off its retransmissions, so a long storm costs a few 429s,
// not one every probePeriods.
const (
	probePeriods    = 5
	maxProbePeriods = 80
)

// learnedGlobal is the global rate the last global 429 left.
type learnedGlobal struct {
	cut   int       // the rate it set; 0: no global 429 yet
	at    time.Time // when
	every int       // periods between probes up (0: probePeriods)
}

// probeEvery is the periods between probes up.
func (l learnedGlobal) probeEvery() int {
	if l.every == 0 {
		return probePeriods
	}
	return l.every
}

// limit is the rate learned at now: full when nothing was learned or the
// probes reached it.
func (l learnedGlobal) limit(now time.Time, full int, period time.Duration) int {
	if l.cut == 0 {
		return full
	}
	n, step := l.cut, time.Duration(l.probeEvery())*period
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
	current := l.limit(now, full, period)
	every := l.probeEvery()
	switch {
	case l.cut == 0 || current >= full: // a new storm
		every = probePeriods
	case current > l.cut: // a probe up met it
		every = min(2*every, maxProbePeriods)
	}
	*l = learnedGlobal{cut: max(1, min(sent, current)/2), at: now, every: every}
}
