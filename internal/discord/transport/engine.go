// Package transport is herald's one REST engine: every Discord call —
// herald's own REST client, discordgo's methods through RoundTripper,
// interaction callbacks, follow-ups and webhook deliveries — goes through an
// Engine, which keeps within every rate limit Discord reports.
//
// Requests queue per bucket (route template + major parameter, remapped to
// Discord's X-RateLimit-Bucket hash once learned); buckets never block each
// other. Inside a bucket, higher priorities go first with aging; when the
// global limit binds, the engine hands its slots across buckets by
// priority, then to the bucket with the longest drain (schedule.go). Waits
// come from Reset-After, Retry-After and the global limit; 5xx and network
// errors back off with full jitter, except that a mutation Discord cannot
// deduplicate is never resent (UnknownOutcomeError). Errors and logs name
// routes by template, never by URL (redact.go). See DESIGN.md and seeds
// 000, 002 and 004.
package transport

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"regexp"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/prometheus/client_golang/prometheus"
)

// Config tunes an Engine. The zero value of every field means its default.
type Config struct {
	// ApplicationID tells interaction follow-ups (exempt from the global
	// limit) from ordinary webhooks.
	ApplicationID string
	// Base sends the requests; when nil, a clone of http.DefaultTransport
	// that keeps idle connections for as many requests as the engine has
	// on the wire at once (see idleConns).
	Base http.RoundTripper
	// UserAgent goes on every request, replacing any the caller (such as
	// discordgo) set: Discord requires "DiscordBot ($url, $versionNumber)"
	// and its Cloudflare may block requests without it. Default
	// UserAgent("dev").
	UserAgent string
	// Clock is the time source; the real clock when nil.
	Clock clockwork.Clock
	// GlobalLimit requests per GlobalPeriod for all non-exempt routes
	// (Discord: 50 per second per bot).
	GlobalLimit  int
	GlobalPeriod time.Duration
	// RequestTimeout bounds one attempt on the wire, not the time queued
	// (default 20s). A timed-out mutation is an unknown outcome.
	RequestTimeout time.Duration
	// MaxRetries bounds retries of one request after 429s and, separately,
	// after 5xx or network errors (default 5).
	MaxRetries int
	// BackoffBase and BackoffCap shape the full-jitter backoff for 5xx and
	// network errors: a random wait in [0, min(cap, base·2^attempt)), never
	// shorter than a wait Discord asked for.
	BackoffBase time.Duration
	BackoffCap  time.Duration
	// QueueTimeout fails a request that waited longer in its queue
	// (default 5 minutes; negative disables).
	QueueTimeout time.Duration
	// MaxQueueDepth rejects requests beyond this many queued in one bucket
	// (default 1000).
	MaxQueueDepth int
	// BreakerThreshold consecutive failures open a bucket's circuit
	// (default 10); BreakerReset later one probe is let through (default 30s).
	BreakerThreshold int
	BreakerReset     time.Duration
	// InvalidLimit is the most invalid requests (401, 403, non-shared 429)
	// the bot's own calls may cause in 10 minutes; at it the engine
	// refuses to send them (default 7,000). InteractionInvalidLimit is the
	// same for calls on interaction tokens (default 1,000), and
	// WebhookInvalidLimit for calls on webhook tokens — the webhook
	// proxy's callers' (default 1,000). Discord's edge bans at 10,000 for
	// all together; the defaults keep a margin, and one kind spending its
	// budget never stops the others (budgets.go).
	InvalidLimit            int
	InteractionInvalidLimit int
	WebhookInvalidLimit     int
	// EdgeBlockWait is how long every request waits when Discord's edge
	// (Cloudflare) blocks the bot without saying for how long: a
	// header-less 429 with no usable retry_after or Retry-After, a 403 with
	// code 40333, or an HTML page. Discord documents no ban length, only
	// that it follows too many invalid requests counted over 10 minutes and
	// that every 401, 403 and 429 counts (Rate Limits, "Invalid Request
	// Limit aka Cloudflare bans"): retrying sooner only adds to the count
	// that got the bot banned. Default: that window, 10 minutes.
	EdgeBlockWait time.Duration
	// AgingStep is how much waiting one priority level is worth: a request
	// that waited AgingStep longer overtakes one a level above it.
	AgingStep time.Duration
	// IdleBucket is how long an empty bucket past its reset is kept before
	// it is pruned (default 1 minute).
	IdleBucket time.Duration
	Logger     *slog.Logger
	// Registerer receives the engine's Prometheus metrics when set.
	Registerer prometheus.Registerer
}

// idleConns is the least number of idle connections to Discord the
// default Base keeps. http.DefaultTransport keeps 2 per host: over
// HTTP/1.1 (a proxy in front of Discord, the simulator) every request
// beyond two at once opened a new connection and closed it after, a dial
// or a TLS handshake per request. Idle connections never outnumber the
// requests that were on the wire at once, so a high cap costs nothing
// until it is used: it follows the global limit (a second's worth of
// requests), and is at least 100.
const idleConns = 100

func (c *Config) defaults() {
	def := func(v *time.Duration, d time.Duration) {
		if *v == 0 {
			*v = d
		}
	}
	defInt := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	if c.UserAgent == "" {
		c.UserAgent = UserAgent("dev")
	}
	if c.Clock == nil {
		c.Clock = clockwork.NewRealClock()
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	defInt(&c.GlobalLimit, 50)
	if c.Base == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConns = max(idleConns, c.GlobalLimit)
		t.MaxIdleConnsPerHost = t.MaxIdleConns
		c.Base = t
	}
	def(&c.GlobalPeriod, time.Second)
	def(&c.RequestTimeout, 20*time.Second)
	defInt(&c.MaxRetries, 5)
	def(&c.BackoffBase, time.Second)
	def(&c.BackoffCap, 30*time.Second)
	def(&c.QueueTimeout, 5*time.Minute)
	defInt(&c.MaxQueueDepth, 1000)
	defInt(&c.BreakerThreshold, 10)
	def(&c.BreakerReset, 30*time.Second)
	defInt(&c.InvalidLimit, 7000)
	defInt(&c.InteractionInvalidLimit, 1000)
	defInt(&c.WebhookInvalidLimit, 1000)
	def(&c.EdgeBlockWait, invalidWindow)
	def(&c.AgingStep, 2*time.Second)
	def(&c.IdleBucket, time.Minute)
}

// invalidWindow is Discord's window for counting invalid requests.
const invalidWindow = 10 * time.Minute

// Engine queues, paces and retries Discord REST requests. It is safe for
// concurrent use; create one per bot token.
type Engine struct {
	cfg     Config
	clock   clockwork.Clock
	log     *slog.Logger
	metrics *metrics

	mu        sync.Mutex
	routeHash map[string]string  // route key → learned bucket hash
	buckets   map[string]*bucket // bucket id (hash or route key + major) → bucket
	global    *globalLimiter
	// globalWaiters are buckets ready to send but for a global slot; their
	// workers sleep until dispatch grants them one (schedule.go).
	globalWaiters map[*bucket]bool
	// claiming are buckets whose worker sent a request with a global slot
	// and has not yet asked for the next: dispatch may hold a slot for one.
	claiming map[*bucket]bool
	// sleeping are buckets whose worker waits for its own limit, and until
	// when: dispatch may hold a slot for one waking soon.
	sleeping      map[*bucket]time.Time
	globalTimer   clockwork.Timer // runs dispatch when the next slot frees
	globalTimerAt time.Time
	gateUntil     time.Time // closed by a global 429
	learned       learnedGlobal
	discord       health    // recent attempts' outcomes (degraded.go)
	edgeUntil     time.Time // closed when Discord's edge blocks the bot (edge.go)
	edgeReason    string
	// unauthorized is set by a 401 to the bot token (killswitch.go).
	unauthorized       bool
	unauthorizedSince  time.Time
	unauthorizedReason string
	deadWebhooks       map[string]bool
	invalid            invalidBudgets
	coord              Coordinator     // nil when no other process shares the token
	processes, rank    int             // on the token, and this one's place among them (share.go)
	lastGlobal         time.Time       // when a global slot was last granted (loan.go)
	lentSlots          int             // of this process's share, lent to others (loan.go)
	lentUntil          time.Time       // the latest end of a loan given
	borrowed           map[string]loan // by lender
	lastPrune          time.Time
	seq                uint64
	rng                *rand.Rand
}

// New builds an Engine.
func New(cfg Config) *Engine {
	cfg.defaults()
	e := &Engine{
		cfg:           cfg,
		clock:         cfg.Clock,
		log:           cfg.Logger,
		routeHash:     map[string]string{},
		buckets:       map[string]*bucket{},
		global:        newGlobalLimiter(cfg.GlobalLimit, cfg.GlobalPeriod),
		globalWaiters: map[*bucket]bool{},
		claiming:      map[*bucket]bool{},
		sleeping:      map[*bucket]time.Time{},
		deadWebhooks:  map[string]bool{},
		borrowed:      map[string]loan{},
		invalid:       newInvalidBudgets(cfg),
		rng:           rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64())),
	}
	e.metrics = newMetrics(e, cfg.Registerer)
	return e
}

// apiPrefix matches the version prefix Discord's REST paths start with.
var apiPrefix = regexp.MustCompile(`^/api(/v\d+)?`)

// Do sends req through its bucket's queue and returns Discord's response.
// A non-2xx answer is returned with a typed error (see Classify); the
// response is returned too when Discord sent one, with its body readable.
// req's context carries cancellation, WithPriority, WithMaxWait and
// WithIdempotent.
func (e *Engine) Do(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	var body []byte
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("discord: read request body: %w", err)
		}
		body = b
	}
	route := ParseRoute(req.Method, apiPrefix.ReplaceAllString(req.URL.EscapedPath(), ""), e.cfg.ApplicationID)
	it := &item{
		ctx:        ctx,
		req:        req,
		body:       body,
		route:      route,
		priority:   priorityOf(ctx),
		idempotent: idempotent(ctx, req.Method),
		done:       make(chan result, 1),
	}
	it.maxWait, it.hasMaxWait = maxWaitOf(ctx)

	e.mu.Lock()
	now := e.clock.Now()
	e.prune(now)
	if err := e.admit(it, now); err != nil {
		e.mu.Unlock()
		return nil, err
	}
	e.mu.Unlock()

	var timeout <-chan time.Time
	if e.cfg.QueueTimeout > 0 {
		t := e.clock.NewTimer(e.cfg.QueueTimeout)
		defer t.Stop()
		timeout = t.Chan()
	}
	select {
	case r := <-it.done:
		return r.resp, r.err
	case <-ctx.Done():
		e.mu.Lock()
		if it.queued() {
			it.bucket.remove(it)
			it.bucket.cancelled++
			it.bucket.signal()
		}
		e.mu.Unlock()
		return nil, fmt.Errorf("discord: %s: %w", route.Key(), ctx.Err())
	case <-timeout:
		e.mu.Lock()
		if it.queued() {
			it.bucket.remove(it)
			it.bucket.signal()
			it.bucket.timedOut++
			e.metrics.outcome(route, "queue_timeout")
			err := &QueueTimeoutError{Route: route.Key(), Bucket: it.bucket.name, Waited: e.clock.Since(it.enqueued),
				QueueLen: it.bucket.queue.Len(), GlobalGateActive: e.gateUntil.After(e.clock.Now())}
			e.mu.Unlock()
			return nil, err
		}
		e.mu.Unlock()
		// Already on the wire: its answer decides.
		select {
		case r := <-it.done:
			return r.resp, r.err
		case <-ctx.Done():
			return nil, fmt.Errorf("discord: %s: %w", route.Key(), ctx.Err())
		}
	}
}

// admit runs the checks that refuse a request before it queues, then
// queues it. The lock is held.
func (e *Engine) admit(it *item, now time.Time) error {
	route := it.route
	if err := e.refuse(it, now); err != nil {
		return err
	}
	b := e.bucketFor(route)
	it.bucket = b
	if b.breaker == breakerOpen && now.Before(b.openedAt.Add(e.cfg.BreakerReset)) {
		return b.circuitError(route, now, e.cfg.BreakerReset, 0)
	}
	if b.queue.Len() >= e.cfg.MaxQueueDepth {
		return &QueueFullError{Route: route.Key(), Bucket: b.name, QueueLen: b.queue.Len(), MaxDepth: e.cfg.MaxQueueDepth}
	}
	if it.hasMaxWait {
		if wait, scope := e.estimate(b, route, now); wait > it.maxWait {
			e.metrics.outcome(route, "max_wait")
			return &RateLimitedError{Route: route.Key(), Bucket: b.name, Scope: scope, RetryAfter: wait}
		}
	}
	e.seq++
	it.seq = e.seq
	it.enqueued = now
	it.rank = now.Add(time.Duration(it.priority) * e.cfg.AgingStep)
	b.push(it)
	b.signal()
	b.lastUsed = now
	e.startWorker(b)
	return nil
}

// bucketFor finds or creates the bucket of a route. The lock is held.
func (e *Engine) bucketFor(r Route) *bucket {
	hash := e.routeHash[r.Key()]
	id := bucketID(hash, r)
	b := e.buckets[id]
	if b == nil {
		b = newBucket(id, hash, r)
		e.buckets[id] = b
	}
	return b
}

// bucketID keys a bucket by its learned hash, or by its route until Discord
// has named the hash, plus the major parameter.
func bucketID(hash string, r Route) string {
	if hash == "" {
		return r.Key() + "|" + r.Major
	}
	return hash + "|" + r.Major
}

// displayName names a bucket in errors, logs and diagnostics: the hash (or
// route) and a fingerprint of the major parameter, which may be a webhook
// or interaction token and so never appears itself.
func displayName(hash string, r Route) string {
	name := hash
	if name == "" {
		name = r.Key()
	}
	if r.Major == "" {
		return name
	}
	sum := sha256.Sum256([]byte(r.Major))
	return name + "#" + hex.EncodeToString(sum[:4])
}

// estimate is how long a request queued now would wait before being sent,
// from what is known: the gates, the bucket's reset and its queue. The
// lock is held.
func (e *Engine) estimate(b *bucket, r Route, now time.Time) (time.Duration, string) {
	wait, scope := e.gateWait(b, r, now)
	if !b.known || b.limit <= 0 {
		return wait, scope
	}
	ahead := b.queue.Len()
	if b.inflight {
		ahead++
	}
	if ahead < b.remaining {
		return wait, scope
	}
	// Full windows the queue ahead still needs after the current one.
	windows := (ahead - b.remaining) / b.limit
	w := b.resetAt.Sub(now) + time.Duration(windows)*b.window
	if w > wait {
		return w, "user"
	}
	return wait, scope
}

// gateWait is how long the gates and the bucket's own state hold a request
// right now, and the scope responsible. The lock is held.
func (e *Engine) gateWait(b *bucket, r Route, now time.Time) (time.Duration, string) {
	wait, scope := e.localWait(b, now)
	if !r.Exempt {
		if d, _ := e.globalWait(now); d > wait {
			wait, scope = d, "global"
		}
	}
	return wait, scope
}

// localWait is how long the edge block and the bucket's own state hold its
// next request, and the scope responsible; the global gate and limit are
// globalWait's. The lock is held.
func (e *Engine) localWait(b *bucket, now time.Time) (time.Duration, string) {
	var wait time.Duration
	scope := ""
	raise := func(d time.Duration, s string) {
		if d > wait {
			wait, scope = d, s
		}
	}
	raise(e.edgeUntil.Sub(now), "edge")
	raise(b.blockedUntil.Sub(now), b.blockedScope)
	if b.known && b.remaining <= 0 {
		raise(b.resetAt.Sub(now), "user")
	}
	return wait, scope
}

// globalWait is how long a request counted by the global limit waits for
// the gate a global 429 closed and for the limiter. blocked means the slot
// it needs is still in flight: its answer, not time, ends the wait. The
// lock is held.
func (e *Engine) globalWait(now time.Time) (d time.Duration, blocked bool) {
	return e.globalWaitAfter(now, 0)
}

// globalWaitAfter is globalWait for the slot k places after the next one.
func (e *Engine) globalWaitAfter(now time.Time, k int) (d time.Duration, blocked bool) {
	d, blocked = e.global.waitAfter(now, k, e.globalShare(now))
	if blocked {
		return d, true
	}
	return max(d, e.gateUntil.Sub(now)), false
}

// CancelAll fails every queued request with a *CancelledError. Requests
// already sent finish normally.
func (e *Engine) CancelAll(reason string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, b := range e.buckets {
		for b.queue.Len() > 0 {
			it := b.pop()
			b.cancelled++
			it.done <- result{err: &CancelledError{Route: it.route.Key(), Reason: reason}}
			n++
		}
		b.signal()
	}
	e.log.Warn("cancelled all queued Discord requests", "reason", reason, "requests", n)
	return n
}

// prune drops buckets that are idle, empty and past every reset, so one
// bucket per interaction token does not accumulate. The lock is held.
func (e *Engine) prune(now time.Time) {
	if now.Sub(e.lastPrune) < e.cfg.IdleBucket/2 {
		return
	}
	e.lastPrune = now
	for id, b := range e.buckets {
		if b.running || b.queue.Len() > 0 || now.Before(b.resetAt) || now.Before(b.blockedUntil) ||
			now.Sub(b.lastUsed) < e.cfg.IdleBucket || b.breaker != breakerClosed {
			continue
		}
		delete(e.buckets, id)
	}
}

// backoff is the full-jitter wait before retry attempt n (1-based).
func (e *Engine) backoff(n int) time.Duration {
	ceil := e.cfg.BackoffBase << min(n-1, 20)
	if ceil > e.cfg.BackoffCap || ceil <= 0 {
		ceil = e.cfg.BackoffCap
	}
	return time.Duration(e.rng.Int64N(int64(ceil)) + 1)
}

// UserAgent is herald's User-Agent for a version, in the form Discord's
// reference ("HTTP API: User Agent") requires of every REST client.
func UserAgent(version string) string {
	return "DiscordBot (https://github.com/herald-bot/herald, " + version + ")"
}

// newAttempt builds the HTTP request for one attempt of it, carrying the
// engine's User-Agent.
func (e *Engine) newAttempt(it *item) *http.Request {
	r := it.req.Clone(it.ctx)
	r.Header.Set("User-Agent", e.cfg.UserAgent)
	if it.body != nil {
		r.Body = io.NopCloser(bytes.NewReader(it.body))
		r.ContentLength = int64(len(it.body))
		r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(it.body)), nil }
	}
	return r
}

var errDropped = errors.New("connection lost after the request was written")
