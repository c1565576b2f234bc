package transport

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"
)

// Coordinator shares the bot's buckets with the other processes sending
// on the same token (internal/cluster): a bucket is sent on by one process
// at a time, the one holding its lease. Its methods are called with the
// engine's lock held, so they never block and never call back into the
// engine; wake is safe to call from any goroutine.
type Coordinator interface {
	// Claim asks to send on the bucket named key. A bucket this process
	// holds is answered from memory; one it does not is asked of the
	// others in the background, and wake is called once the answer is in.
	Claim(key string, wake func()) Claim
	// Report keeps what Discord last said of a held bucket, for whichever
	// process holds it next.
	Report(key string, s BucketState)
	// Starved says a held bucket's next request waits for a slot of the
	// global limit, nothing of it in flight; the next Claim ends that.
	// Another process that wants the bucket may have more slots to spare.
	Starved(key string)
	// Idle says this process has nothing queued for a held bucket: the
	// coordinator lets it go unless it is claimed again soon.
	Idle(key string, s BucketState)
	// Learned shares the bucket hash Discord named for a route.
	Learned(route, hash string)
}

// Claim is a Coordinator's answer.
type Claim struct {
	Held bool
	// Wait, when the bucket is not held, is how long until claiming again
	// may succeed; the engine also wakes when the answer comes in.
	// Asking says the answer is still to come: the wait is a database
	// round trip, not another process's turn, and no reason to give up
	// on a request that may wait only briefly.
	Wait   time.Duration
	Asking bool
	// Handed is what the previous holder left of the bucket's state, on
	// the first claim after the bucket changed hands.
	Handed *BucketState
	// Wanted, when held, says another process waits for the bucket: it
	// goes first for global slots, since what waits for it elsewhere is
	// not in its queue here, and is handed on sooner.
	Wanted bool
}

// BucketState is what Discord last said of a bucket.
type BucketState struct {
	Limit, Remaining int
	ResetAt          time.Time
}

// Coordinate makes the engine send on a shared bucket only while c says
// this process holds it, and shares the bucket hashes it learns. Call it
// once, before the engine is shared with another process.
func (e *Engine) Coordinate(c Coordinator) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.coord = c
}

// SeedHashes files routes under the bucket hashes other processes learned,
// so every process names a bucket the same way. A hash this engine
// learned itself is kept. Requests already queued under a route's name
// move to its hash's bucket, unless a request of theirs is in flight or
// this process holds the route's lease (their next answer moves them):
// otherwise they would go on claiming the route's name, which the
// bucket's holder keeps only while it uses the bucket, and never the
// hash's, which is the one handed round.
func (e *Engine) SeedHashes(routeHash map[string]string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	fresh := map[string]string{}
	for route, hash := range routeHash {
		if _, ok := e.routeHash[route]; !ok {
			e.routeHash[route] = hash
			fresh[route] = hash
		}
	}
	if len(fresh) == 0 {
		return
	}
	var named []*bucket
	for _, b := range e.buckets {
		if _, ok := fresh[b.route.Key()]; ok && b.hash == "" && !b.held && !b.inflight {
			named = append(named, b)
		}
	}
	for _, b := range named {
		e.refile(b, b.route, fresh[b.route.Key()])
		// Its worker claims the new name, or finds its queue moved and stops.
		b.signal()
	}
}

// coordinated reports whether a route's bucket is shared: every route but
// those on an interaction token, whose bucket is one interaction's and
// whose calls come from the process that answered it.
func coordinated(r Route) bool { return !strings.Contains(r.Template, "{interaction_token}") }

// leaseKey names a bucket for the coordinator: a digest of its id, which
// may hold a webhook token.
func leaseKey(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:12])
}

// state is what the next holder needs: a 429's wait counts as an empty
// window until it ends.
func (b *bucket) state() BucketState {
	s := BucketState{Limit: b.limit, Remaining: b.remaining, ResetAt: b.resetAt}
	if b.blockedUntil.After(s.ResetAt) {
		s.Remaining, s.ResetAt = 0, b.blockedUntil
	}
	return s
}

// claim asks the coordinator for b before its next request. It returns
// the coordinator's answer; one that handed b over with the previous
// holder's state has applied it, and the caller looks at b's limits
// again. The lock is held.
func (e *Engine) claim(b *bucket, r Route) (c Claim, handed bool) {
	if e.coord == nil || !coordinated(r) {
		return Claim{Held: true}, false
	}
	c = e.coord.Claim(b.lease, b.signal)
	b.held, b.wanted = c.Held, c.Held && c.Wanted
	if !c.Held {
		c.Wait = max(c.Wait, time.Millisecond)
		return c, false
	}
	if h := c.Handed; h != nil && h.Limit > 0 {
		// The previous holder sent last: what it saw is newer than
		// anything this process knows.
		b.known = true
		b.limit, b.remaining, b.resetAt = h.Limit, h.Remaining, h.ResetAt
		return c, true
	}
	return c, false
}

// starved tells the coordinator b waits for a global slot. The lock is
// held.
func (e *Engine) starved(b *bucket) {
	if b.held && e.coord != nil {
		e.coord.Starved(b.lease)
	}
}

// report passes a held bucket's state to the coordinator. The lock is held.
func (e *Engine) report(b *bucket) {
	if b.held && e.coord != nil && b.known {
		e.coord.Report(b.lease, b.state())
	}
}

// idle tells the coordinator b's queue is empty here. The lock is held.
func (e *Engine) idle(b *bucket) {
	if e.coord == nil {
		return
	}
	if b.held {
		e.coord.Idle(b.lease, b.state())
		b.held = false
	}
	if b.alias != "" {
		e.coord.Idle(b.alias, b.state())
		b.alias = ""
	}
}

// rename moves b to the lease named after the hash Discord just gave it.
// The lease under its old name is kept while b is in use here: a process
// that does not know the hash yet still claims that name, and must not
// send into the bucket meanwhile. The new name is claimed before the
// next request. The lock is held.
func (e *Engine) rename(b *bucket, lease string) {
	if e.coord != nil && b.held {
		if b.alias != "" {
			e.coord.Idle(b.alias, b.state())
		}
		b.alias = b.lease
	}
	b.lease, b.held = lease, false
}
