package transport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"sync/atomic"
	"time"
)

// startWorker makes sure a goroutine serves b's queue. The lock is held.
func (e *Engine) startWorker(b *bucket) {
	if b.running {
		return
	}
	b.running = true
	go e.work(b)
}

// work sends b's requests one at a time, in rank order, each when every
// limit allows it; it exits when the queue is empty. One request in flight
// per bucket keeps Remaining exact, so a burst sees no 429 in steady state.
// A request counted by the global limit also needs a global slot, which
// the engine hands out across buckets (see schedule.go).
func (e *Engine) work(b *bucket) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for b.queue.Len() > 0 {
		// The queue is read under the lock below, so earlier wake-ups are
		// stale; dropping them keeps sleep from returning early.
		select {
		case <-b.wake:
		default:
		}
		it := b.queue[0]
		now := e.clock.Now()
		if err := e.refuse(it, now); err != nil {
			e.deliver(b.pop(), nil, nil, err)
			continue
		}
		local, scope := e.localWait(b, now)
		wait := local
		if !it.route.Exempt && b.slot < 0 {
			if gw, _ := e.globalWait(now); gw > wait {
				wait, scope = gw, "global"
			}
		}
		if e.overMaxWait(b, it, 0, wait, scope) {
			continue
		}
		if local > 0 && !it.route.Exempt {
			e.sleeping[b] = now.Add(local) // dispatch may hold a slot for it
		}
		if local > 0 || it.route.Exempt {
			// Neither a granted slot nor one held for b may sit idle
			// while b waits or sends an exempt request.
			e.leaveGlobal(b, now)
		}
		if local > 0 {
			e.sleep(b, local)
			delete(e.sleeping, b)
			continue
		}
		if c, handed := e.claim(b, it.route); handed {
			continue // what the previous holder left may hold b still
		} else if !c.Held {
			// Another process holds b, or the coordinator is asking: wait
			// for the answer or the other's turn, whichever comes first.
			if !c.Asking && e.overMaxWait(b, it, 0, c.Wait, "user") {
				continue
			}
			e.leaveGlobal(b, now)
			e.sleep(b, c.Wait)
			continue
		}
		if b.breaker == breakerOpen {
			if now.Before(b.openedAt.Add(e.cfg.BreakerReset)) {
				e.metrics.outcome(it.route, "circuit_open")
				e.deliver(b.pop(), nil, nil, b.circuitError(it.route, now, e.cfg.BreakerReset, now.Sub(it.enqueued)))
				continue
			}
			b.breaker = breakerHalfOpen // this request is the one probe
		}
		if w := e.discord.wait(it.priority, now); w > 0 {
			// Each turn is short, but a request may wait many while
			// Discord fails: past its max wait in all, it ends unsent and
			// its job snoozes, holding no worker.
			if e.overMaxWait(b, it, now.Sub(it.enqueued), w, "degraded") {
				continue
			}
			e.leaveGlobal(b, now)
			e.sleep(b, w)
			continue
		}
		if !it.route.Exempt && b.slot < 0 && !e.acquireGlobal(b, now) {
			e.starved(b)
			e.await(b)
			continue // and claim b again: it may have gone meanwhile
		}
		e.discord.sending(it.priority, now)
		b.pop()
		slot := b.slot
		b.slot = -1
		if slot >= 0 {
			e.claiming[b] = true
		}
		b.remaining--
		b.inflight = true
		e.metrics.queueWait.WithLabelValues(it.route.Key()).Observe(now.Sub(it.enqueued).Seconds())
		e.mu.Unlock()
		resp, body, wrote, err := e.send(it)
		e.mu.Lock()
		b.inflight = false
		if slot >= 0 {
			// No dispatch here: b still claims until its worker, still
			// holding the lock, asks for its next slot or stops (schedule.go).
			e.global.done(slot, e.clock.Now())
		}
		e.handle(b, it, resp, body, wrote, err)
	}
	e.leaveGlobal(b, e.clock.Now())
	e.idle(b)
	b.running = false
}

// overMaxWait ends it, the head of b's queue, with a *RateLimitedError
// when it may not wait wait more, having waited waited already, and
// reports whether it did. The lock is held.
func (e *Engine) overMaxWait(b *bucket, it *item, waited, wait time.Duration, scope string) bool {
	if wait <= 0 || !it.hasMaxWait || waited+wait <= it.maxWait {
		return false
	}
	e.metrics.outcome(it.route, "max_wait")
	e.deliver(b.pop(), nil, nil, &RateLimitedError{Route: it.route.Key(), Bucket: b.name, Scope: scope, RetryAfter: wait})
	return true
}

// sleep waits d or until the queue changes, without the lock.
func (e *Engine) sleep(b *bucket, d time.Duration) {
	e.mu.Unlock()
	t := e.clock.NewTimer(d)
	select {
	case <-t.Chan():
	case <-b.wake:
	}
	t.Stop()
	e.mu.Lock()
}

// await waits, without the lock, until b is woken: by a global slot
// granted to it, or a change to its queue.
func (e *Engine) await(b *bucket) {
	e.mu.Unlock()
	<-b.wake
	e.mu.Lock()
}

// refuse ends a request the engine must not send: after a 401, to a dead
// webhook, or past the invalid-request budget. It runs when a request
// queues and again when it is sent, since those states may begin while it
// waits. The lock is held.
func (e *Engine) refuse(it *item, now time.Time) error {
	if e.unauthorized {
		return ErrUnauthorized
	}
	if e.gone(it.route) {
		return &APIError{Route: it.route.Key(), Status: http.StatusNotFound, Code: 10015,
			Message: "Unknown Webhook (Discord said earlier that this webhook is gone; it is not used again)"}
	}
	return e.invalid.check(it.route, now)
}

// send makes one attempt. wrote reports whether the request may have
// reached Discord, which decides whether a lost answer is an unknown outcome.
func (e *Engine) send(it *item) (resp *http.Response, body []byte, wrote bool, err error) {
	var written atomic.Bool
	ctx, cancel := context.WithTimeout(it.ctx, e.cfg.RequestTimeout)
	defer cancel()
	req := e.newAttempt(it)
	req = req.WithContext(httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		WroteRequest: func(httptrace.WroteRequestInfo) { written.Store(true) },
	}))
	resp, err = e.cfg.Base.RoundTrip(req)
	if err != nil {
		// A RoundTripper that does not report writes gets the cautious
		// answer: only a failed dial proves nothing was sent.
		var op *net.OpError
		dialFailed := errors.As(err, &op) && op.Op == "dial"
		return nil, nil, written.Load() || !dialFailed, redact(it.req, it.route, err)
	}
	body, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, nil, true, redact(it.req, it.route, err)
	}
	return resp, body, true, nil
}

// handle acts on one attempt's outcome: deliver it, or queue it again after
// the wait Discord asked for or a backoff. The lock is held.
func (e *Engine) handle(b *bucket, it *item, resp *http.Response, body []byte, wrote bool, err error) {
	now := e.clock.Now()
	r := it.route
	if err != nil {
		if it.ctx.Err() != nil {
			b.cancelled++
			e.deliver(it, nil, nil, it.ctx.Err())
			return
		}
		e.discord.record(now, b.id, true)
		if wrote && !it.idempotent {
			e.failure(b, now)
			e.metrics.outcome(r, "unknown_outcome")
			e.log.Warn("Discord request lost after it was written; not resent", "route", r.Key(), "bucket", b.name, "err", err)
			e.deliver(it, nil, nil, &UnknownOutcomeError{Route: r.Key(), Err: fmt.Errorf("%w: %w", errDropped, err)})
			return
		}
		e.retryAfterFailure(b, b, it, 0, err, now)
		return
	}
	e.metrics.requests.WithLabelValues(r.Key(), statusLabel(resp.StatusCode)).Inc()
	own := b // the bucket whose worker runs this
	if h := parseBucketHeaders(resp.Header); h.ok {
		b = e.learn(b, r, h, now)
		it.bucket = b
	}
	status := resp.StatusCode
	e.discord.record(now, b.id, status >= 500)
	switch {
	case status == http.StatusTooManyRequests:
		e.rateLimited(own, b, it, resp, body, now)
	case status >= 500 && !it.idempotent:
		// Discord cannot deduplicate this request, and a 5xx — from
		// Discord or from a proxy in front of it — does not prove it was
		// not applied: a resend could post a follow-up twice. The caller
		// reconciles (read back, or resend with a nonce and enforce_nonce).
		e.failure(b, now)
		e.metrics.outcome(r, "unknown_outcome")
		e.log.Warn("Discord answered a mutation with a server error; not resent", "route", r.Key(), "bucket", b.name, "status", status)
		e.deliver(it, resp, body, &UnknownOutcomeError{Route: r.Key(), Status: status})
	case status >= 500:
		e.retryAfterFailure(own, b, it, status, nil, now)
	case status >= 400:
		e.success(b)
		api := parseAPIError(r.Key(), status, resp.Header, body)
		e.rejected(b, it, api, now)
		e.deliver(it, resp, body, api)
	default:
		e.success(b)
		e.deliver(it, resp, body, nil)
	}
}

// learn applies a response's bucket headers, remapping the route when
// Discord names a hash this route was not filed under; the route's queued
// requests move to the new bucket. It returns the bucket the headers
// describe. The lock is held.
func (e *Engine) learn(b *bucket, r Route, h bucketHeaders, now time.Time) *bucket {
	target := b
	if h.hash != "" && h.hash != b.hash {
		previous := e.routeHash[r.Key()]
		e.routeHash[r.Key()] = h.hash
		if previous != "" {
			e.log.Info("Discord changed a route's bucket", "route", r.Key(), "from", previous, "to", h.hash)
		}
		if e.coord != nil && previous != h.hash {
			e.coord.Learned(r.Key(), h.hash)
		}
		target = e.refile(b, r, h.hash)
	}
	target.learn(h, now)
	target.lastUsed = now
	e.report(target)
	return target
}

// refile files route r's requests queued in b under hash, which the
// route's key now maps to, and returns the bucket that holds them: b
// itself, renamed, when it was filed under its route and the hash has no
// bucket yet, else the hash's bucket, with the requests moved. The lock
// is held.
func (e *Engine) refile(b *bucket, r Route, hash string) *bucket {
	id := bucketID(hash, r)
	if _, exists := e.buckets[id]; !exists && b.hash == "" {
		// A bucket filed under its route takes the hash's name, keeping
		// its queue, worker and counters.
		delete(e.buckets, b.id)
		b.id, b.hash, b.name = id, hash, displayName(hash, r)
		e.rename(b, leaseKey(id))
		e.buckets[id] = b
		return b
	}
	target := e.bucketFor(r)
	for i := 0; i < b.queue.Len(); {
		if q := b.queue[i]; q.route.Key() == r.Key() {
			b.remove(q)
			target.push(q)
			continue
		}
		i++
	}
	if target.queue.Len() > 0 {
		e.startWorker(target)
	}
	return target
}

// rateLimited handles a 429 by its scope and queues the request again,
// unless it has had MaxRetries 429s already. The lock is held.
func (e *Engine) rateLimited(own, b *bucket, it *item, resp *http.Response, body []byte, now time.Time) {
	t := parse429(resp.Header, body)
	if t.scope == "edge" {
		var reason string
		t.retryAfter, reason = e.edgeWait(it.route.Key(), t.retryAfter)
		e.edgeBlocked(now, t.retryAfter, reason)
	}
	until := now.Add(t.retryAfter)
	b.rateLimited[t.scope]++
	e.metrics.rateLimited.WithLabelValues(it.route.Key(), t.scope).Inc()
	if t.scope != "shared" {
		e.invalid.add(it.route, now)
	}
	switch t.scope {
	case "global":
		e.gateUntil = later(e.gateUntil, until)
		e.learned.learn(now, e.global.count(now), e.cfg.GlobalLimit, e.cfg.GlobalPeriod)
	case "edge": // held by edgeBlocked above
	default:
		b.blockedUntil = later(b.blockedUntil, until)
		b.blockedScope = t.scope
		e.report(b)
	}
	it.retries.rateLimited++
	if it.retries.rateLimited > e.cfg.MaxRetries {
		e.deliver(it, resp, body, &RateLimitedError{Route: it.route.Key(), Bucket: b.name, Scope: t.scope, RetryAfter: t.retryAfter})
		return
	}
	b.retried++
	e.metrics.retries.WithLabelValues(it.route.Key(), "429").Inc()
	e.requeue(own, b, it)
}

// retryAfterFailure backs off after a 5xx or network error, or gives up
// after MaxRetries or when the failure opened the bucket's circuit.
func (e *Engine) retryAfterFailure(own, b *bucket, it *item, status int, err error, now time.Time) {
	e.failure(b, now)
	it.retries.failed++
	if b.breaker == breakerOpen {
		e.deliver(it, nil, nil, b.circuitError(it.route, now, e.cfg.BreakerReset, now.Sub(it.enqueued)))
		return
	}
	if it.retries.failed > e.cfg.MaxRetries {
		e.log.Warn("Discord request failed; giving up", "route", it.route.Key(), "bucket", b.name,
			"status", status, "attempts", it.retries.failed, "err", err)
		e.deliver(it, nil, nil, &TransientError{Route: it.route.Key(), Bucket: b.name, Status: status, Attempts: it.retries.failed, Err: err})
		return
	}
	// err was redacted by send: it names the route, never the URL.
	e.log.Info("Discord request failed; retrying after a backoff", "route", it.route.Key(), "bucket", b.name,
		"status", status, "attempt", it.retries.failed, "err", err)
	// The backoff only ever extends a wait Discord asked for.
	b.blockedUntil = later(b.blockedUntil, now.Add(e.backoff(it.retries.failed)))
	b.blockedScope = "backoff"
	b.retried++
	reason := "network"
	if status != 0 {
		reason = "5xx"
	}
	e.metrics.retries.WithLabelValues(it.route.Key(), reason).Inc()
	e.requeue(own, b, it)
}

// requeue puts a request back in its place (its rank is unchanged, so it
// goes before later ones). b may differ from own, the bucket whose worker
// runs this, when the route was just remapped; then b's worker is woken or
// started. The lock is held.
func (e *Engine) requeue(own, b *bucket, it *item) {
	b.push(it)
	if b != own {
		b.signal()
		e.startWorker(b)
	}
}

// failure counts a failed attempt for the circuit breaker.
func (e *Engine) failure(b *bucket, now time.Time) {
	b.failures++
	if b.breaker == breakerHalfOpen || (b.breaker == breakerClosed && b.failures >= e.cfg.BreakerThreshold) {
		b.breaker, b.openedAt = breakerOpen, now
		e.log.Warn("circuit opened", "bucket", b.name, "route", b.route.Key(), "consecutive_failures", b.failures)
	}
}

// success closes the circuit: Discord answered, even if with a 4xx.
func (e *Engine) success(b *bucket) {
	if b.breaker != breakerClosed {
		e.log.Info("circuit closed", "bucket", b.name, "route", b.route.Key())
	}
	b.failures, b.breaker = 0, breakerClosed
}

// deliver hands the outcome to the waiting caller. The lock is held.
func (e *Engine) deliver(it *item, resp *http.Response, body []byte, err error) {
	if it.bucket != nil {
		it.bucket.processed++
	}
	if resp != nil {
		resp.Body = io.NopCloser(bytes.NewReader(body))
	}
	it.done <- result{resp: resp, err: err}
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func statusLabel(code int) string { return strconv.Itoa(code) }
