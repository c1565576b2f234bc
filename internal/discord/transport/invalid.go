package transport

import "time"

// invalidCounter counts invalid requests (401, 403, non-shared 429) in a
// sliding window in one-second slots, so memory stays constant however many
// arrive.
type invalidCounter struct {
	window time.Duration
	slots  []int   // per-second counts, a ring
	epoch  []int64 // the unix second each slot holds
}

func newInvalidCounter(window time.Duration) *invalidCounter {
	n := max(int(window/time.Second), 1)
	return &invalidCounter{window: window, slots: make([]int, n), epoch: make([]int64, n)}
}

func (c *invalidCounter) add(now time.Time) {
	sec := now.Unix()
	i := int(sec % int64(len(c.slots)))
	if c.epoch[i] != sec {
		c.epoch[i], c.slots[i] = sec, 0
	}
	c.slots[i]++
}

// count returns the invalid requests in the window ending now and how long
// until the oldest of them leaves it.
func (c *invalidCounter) count(now time.Time) (n int, oldestLeaves time.Duration) {
	sec := now.Unix()
	span := int64(len(c.slots))
	oldest := int64(-1)
	for i, e := range c.epoch {
		if c.slots[i] > 0 && sec-e < span {
			n += c.slots[i]
			if oldest < 0 || e < oldest {
				oldest = e
			}
		}
	}
	if oldest >= 0 {
		oldestLeaves = time.Unix(oldest+span, 0).Sub(now)
	}
	return n, oldestLeaves
}
