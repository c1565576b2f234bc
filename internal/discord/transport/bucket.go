package transport

import (
	"container/heap"
	"context"
	"net/http"
	"time"
)

// item is one request waiting in, or sent from, a bucket.
type item struct {
	ctx        context.Context
	req        *http.Request
	body       []byte
	route      Route
	priority   Priority
	idempotent bool
	maxWait    time.Duration
	hasMaxWait bool
	done       chan result

	bucket   *bucket
	enqueued time.Time
	rank     time.Time // enqueued plus priority·AgingStep: lower goes first
	seq      uint64    // FIFO among equal ranks
	index    int       // position in the heap, -1 when not queued
	retries  struct{ rateLimited, failed int }
}

func (it *item) queued() bool { return it.index >= 0 }

type result struct {
	resp *http.Response
	err  error
}

// queue orders items by rank, then arrival.
type queue []*item

func (q queue) Len() int { return len(q) }
func (q queue) Less(i, j int) bool {
	if !q[i].rank.Equal(q[j].rank) {
		return q[i].rank.Before(q[j].rank)
	}
	return q[i].seq < q[j].seq
}
func (q queue) Swap(i, j int) { q[i], q[j] = q[j], q[i]; q[i].index = i; q[j].index = j }
func (q *queue) Push(x any)   { it := x.(*item); it.index = len(*q); *q = append(*q, it) }
func (q *queue) Pop() any {
	old := *q
	it := old[len(old)-1]
	old[len(old)-1] = nil
	*q = old[:len(old)-1]
	it.index = -1
	return it
}

type breakerState string

const (
	breakerClosed   breakerState = "closed"
	breakerOpen     breakerState = "open"
	breakerHalfOpen breakerState = "half-open"
)

// bucket is one rate-limit bucket: its queue, what Discord last said about
// it, and its circuit breaker. Every field is guarded by Engine.mu.
type bucket struct {
	id    string
	name  string // for people: never holds a token
	hash  string
	route Route // the first route seen; later routes may share the hash
	// lease names the bucket to the Coordinator; held is set while this
	// process holds it; alias is its name before Discord named its hash,
	// held as long as the bucket is in use (coordinate.go).
	lease, alias string
	held         bool
	wanted       bool // held, and another process waits for it

	queue    queue
	running  bool // a worker goroutine serves the queue
	inflight bool // a request is on the wire
	slot     int  // a global slot granted to its worker, or -1
	wake     chan struct{}
	lastUsed time.Time

	known        bool // Discord has described this bucket
	limit        int
	remaining    int
	resetAt      time.Time
	window       time.Duration // longest Reset-After seen: the window length
	blockedUntil time.Time     // a 429 or a backoff
	blockedScope string

	breaker  breakerState
	failures int
	openedAt time.Time

	processed, retried, timedOut, cancelled int64
	rateLimited                             map[string]int64
}

func newBucket(id, hash string, r Route) *bucket {
	return &bucket{
		id: id, name: displayName(hash, r), hash: hash, route: r, lease: leaseKey(id),
		wake: make(chan struct{}, 1), breaker: breakerClosed, rateLimited: map[string]int64{}, slot: -1,
	}
}

// push and remove change the queue without waking its worker: callers
// outside the worker call signal, so the worker never wakes for its own
// changes.
func (b *bucket) push(it *item) {
	it.bucket = b
	heap.Push(&b.queue, it)
}

func (b *bucket) pop() *item { return heap.Pop(&b.queue).(*item) }

func (b *bucket) remove(it *item) { heap.Remove(&b.queue, it.index) }

// signal wakes the bucket's worker to look at its queue again.
func (b *bucket) signal() {
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

// learn records what a response's headers say about this bucket.
func (b *bucket) learn(h bucketHeaders, now time.Time) {
	b.known = true
	b.limit = h.limit
	b.remaining = h.remaining
	b.resetAt = now.Add(h.resetAfter)
	b.window = max(b.window, h.resetAfter)
}

func (b *bucket) circuitError(r Route, now time.Time, reset time.Duration, waited time.Duration) *CircuitOpenError {
	return &CircuitOpenError{Route: r.Key(), Bucket: b.name, ConsecutiveFailures: b.failures, OpenSince: b.openedAt,
		RetryAfter: max(b.openedAt.Add(reset).Sub(now), 0), Waited: waited, QueueLen: b.queue.Len()}
}
