package transport

import (
	"slices"
	"time"
)

// While Discord fails many requests at once — an incident: 5xx answers or
// none, on any route — a retry is as likely to fail as the first try, and
// every one is a call Discord must serve. So while degradedFailures of the
// engine's last healthWindow attempts (within healthMaxAge) failed, in as
// many buckets, requests below interactive priority go out one at a time,
// probeEvery apart: each is a probe of whether Discord is back, and the
// others wait for it. Member-facing requests go as they come (and probe
// too). Once enough attempts succeed, or the failures age out, everything
// goes again. One failing resource is its bucket's breaker's business,
// not a reason to slow every other: failures count once per bucket. The
// state is this process's own.
const (
	healthWindow     = 10
	degradedFailures = 3
	healthMaxAge     = 10 * time.Second
	probeEvery       = 500 * time.Millisecond
)

// health is the outcomes of the engine's last attempts.
type health struct {
	at        [healthWindow]time.Time
	failed    [healthWindow]string // the failed attempt's bucket, "" for a success
	next      int
	lastProbe time.Time
}

// record notes one attempt's outcome in bucket: failed when Discord
// answered 5xx or not at all.
func (h *health) record(now time.Time, bucket string, failed bool) {
	h.at[h.next], h.failed[h.next] = now, ""
	if failed {
		h.failed[h.next] = bucket
	}
	h.next = (h.next + 1) % healthWindow
}

// failures counts the buckets among the recent failed attempts.
func (h *health) failures(now time.Time) int {
	var seen [healthWindow]string
	n := 0
	for i, b := range h.failed {
		if b != "" && now.Sub(h.at[i]) < healthMaxAge && !slices.Contains(seen[:n], b) {
			seen[n] = b
			n++
		}
	}
	return n
}

func (h *health) degraded(now time.Time) bool { return degradedWith(h.failures(now)) }

// degradedWith reports whether failures distinct failing buckets make
// the engine degraded.
func degradedWith(failures int) bool { return failures >= degradedFailures }

// wait is how long a request of priority p must wait before it may go as
// the next probe (0: it may go now).
func (h *health) wait(p Priority, now time.Time) time.Duration {
	if p == PriorityInteractive || !h.degraded(now) {
		return 0
	}
	return max(0, h.lastProbe.Add(probeEvery).Sub(now))
}

// sending notes that a request of priority p goes now.
func (h *health) sending(p Priority, now time.Time) {
	if p != PriorityInteractive && h.degraded(now) {
		h.lastProbe = now
	}
}
