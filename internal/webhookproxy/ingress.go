package webhookproxy

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/herald-bot/herald/internal/webhookproxy/execute"
)

// acceptDeadline bounds how long a caller waits for its request to be
// stored; past it the answer is 503 and nothing was acknowledged.
const acceptDeadline = 5 * time.Second

// unavailableRetryAfter is the Retry-After of a 503: about how long a
// Postgres failover or restart takes.
const unavailableRetryAfter = 5

// pollEvery is how often a caller holding ?wait=true looks at its
// delivery, for deliveries another herald finishes.
const pollEvery = 250 * time.Millisecond

// proxy serves the Discord-compatible ingress and the /proxy/ endpoints.
type proxy struct {
	set     settings
	db      *pgxpool.Pool
	accept  *acceptor
	tokens  *verifier
	bodies  *bytePool
	rates   *rates
	hasher  *hasher
	waiters *waiters
	metrics *metrics
	log     *slog.Logger
	// stopping is closed when a stop begins: callers holding ?wait=true
	// are answered 202 at once.
	stopping chan struct{}
}

func (p *proxy) handler() http.Handler {
	mux := http.NewServeMux()
	// Discord's webhook routes without a version, and with the versions
	// client libraries use (docs: API Versioning).
	for _, prefix := range []string{"/api", "/api/v9", "/api/v10"} {
		mux.HandleFunc("POST "+prefix+"/webhooks/{id}/{token}", p.execute)
		mux.HandleFunc("POST "+prefix+"/webhooks/{id}/{token}/{variant}", p.execute)
	}
	mux.HandleFunc("GET /proxy/deliveries/{id}", p.getDelivery)
	mux.HandleFunc("GET /proxy/targets", p.admin(p.getTargets))
	mux.HandleFunc("GET /proxy/dead", p.admin(p.listDead))
	mux.HandleFunc("POST /proxy/dead/replay", p.admin(p.replayDead))
	mux.HandleFunc("DELETE /proxy/dead", p.admin(p.purgeDead))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { p.refuse(w, r, "", errNoRoute) })
	return mux
}

// errNoRoute is Discord's answer to a path it has no route for.
var errNoRoute = &execute.Error{Status: http.StatusNotFound, Message: "404: Not Found"}

// execute is Discord's Execute Webhook: check the request as Discord
// would, store it with its delivery job, and answer as Discord does —
// 204, or with ?wait=true the message once delivered. The cheap checks
// come first and the token is verified before the body is read, so a
// bad caller costs neither memory nor a request at Discord.
func (p *proxy) execute(w http.ResponseWriter, r *http.Request) {
	d, wait, apiErr := p.head(r)
	if apiErr == nil {
		apiErr = p.rates.admit(d.service, time.Now())
	}
	if apiErr != nil {
		p.refuse(w, r, d.webhookID, apiErr)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), acceptDeadline)
	defer cancel()
	if apiErr := p.verify(ctx, &d); apiErr != nil {
		p.refuse(w, r, d.webhookID, apiErr)
		return
	}
	held, apiErr := p.body(w, r, &d)
	defer p.bodies.give(d.service, held)
	if apiErr != nil {
		p.refuse(w, r, d.webhookID, apiErr)
		return
	}
	deliveryID, err := p.accept.accept(ctx, d)
	if err != nil {
		if !errors.As(err, &apiErr) {
			p.log.WarnContext(r.Context(), "webhook request not stored", "webhook", d.webhookID, "err", err)
			apiErr = &execute.Error{Status: http.StatusServiceUnavailable, Message: "The proxy cannot store requests right now.", RetryAfter: unavailableRetryAfter}
		}
		p.refuse(w, r, d.webhookID, apiErr)
		return
	}
	p.metrics.accepted.Inc()
	if !wait {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	p.await(w, r, deliveryID)
}

// head checks the path, the caller and the query. The delivery it returns
// names its webhook only once the id is known to be a snowflake, so logs
// and metrics never carry text from a request path.
func (p *proxy) head(r *http.Request) (delivery, bool, *execute.Error) {
	id, token, variant := r.PathValue("id"), r.PathValue("token"), r.PathValue("variant")
	if !pathSegment(id) || !pathSegment(token) || (variant != "" && variant != "slack" && variant != "github") {
		// An encoded slash or other bytes no id or token has: Discord
		// routes the decoded path, which matches no route.
		return delivery{}, false, errNoRoute
	}
	if !snowflake(id) {
		f := execute.FormErrors{}
		f.Add("webhook_id", "NUMBER_TYPE_COERCE", "Value \""+id+"\" is not snowflake.")
		return delivery{}, false, f.Err()
	}
	d := delivery{webhookID: id, token: token, variant: variant}
	service, ok := p.authorize(r, id)
	if !ok {
		return d, false, execute.ErrMissingAccess
	}
	d.service = service
	q := r.URL.Query()
	wait, threadID := false, q.Get("thread_id")
	f := execute.FormErrors{}
	if v := q.Get("wait"); v != "" {
		var err error
		if wait, err = strconv.ParseBool(v); err != nil {
			f.Add("wait", "BOOLEAN_TYPE_COERCE", "Value \""+v+"\" is not a valid boolean.")
		}
	}
	if threadID != "" && !snowflake(threadID) {
		f.Add("thread_id", "NUMBER_TYPE_COERCE", "Value \""+threadID+"\" is not snowflake.")
	}
	if err := f.Err(); err != nil {
		return d, false, err
	}
	d.threadID, d.target = threadID, id
	if threadID != "" {
		d.target += "/" + threadID
	}
	if variant == "github" {
		d.event = r.Header.Get("X-GitHub-Event")
	}
	return d, wait, nil
}

// pathSegment reports whether s can be a webhook id or token as Discord
// issues them: letters, digits, '-' and '_', never a decoded '/' or '%'.
func pathSegment(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// verify refuses a token Discord refused, once asked; a caller past its
// invalid-request budget or its verifications in flight gets 429. It
// names the token in d by its fingerprint.
func (p *proxy) verify(ctx context.Context, d *delivery) *execute.Error {
	h, err := p.hasher.hash(ctx, d.webhookID, d.token)
	got := unverified
	if err == nil {
		d.fp = h.fingerprint()
		got, err = p.tokens.checkHash(ctx, d.service, d.webhookID, d.token, h)
	}
	var over *overBudget
	switch {
	case errors.As(err, &over):
		return &execute.Error{Status: http.StatusTooManyRequests, RetryAfter: math.Ceil(over.retryAfter.Seconds()), Code: codeOverBudget}
	case errors.Is(err, errVerifyBusy):
		return &execute.Error{Status: http.StatusTooManyRequests, RetryAfter: 1}
	case err != nil:
		p.log.WarnContext(ctx, "webhook token not verified", "webhook", d.webhookID, "err", err)
		return errCannotVerify
	case got == unverified:
		vouched, err := p.tokens.vouched(ctx, d.webhookID)
		if err != nil || vouched {
			return errCannotVerify
		}
	}
	return got.refusal()
}

// errCannotVerify: Discord could not be asked about a token now.
var errCannotVerify = &execute.Error{Status: http.StatusServiceUnavailable, Message: "The proxy cannot verify this token right now.", RetryAfter: unavailableRetryAfter}

// codeOverBudget marks a 429 for a caller whose bad tokens spent its
// share of invalid requests, so it is counted apart from a full queue.
const codeOverBudget = 1

// body reads and checks the request's body within the upload limit and
// the bytes in flight; it returns the bytes it holds from the pool, to
// give back when the request is done.
func (p *proxy) body(w http.ResponseWriter, r *http.Request, d *delivery) (int64, *execute.Error) {
	// A body that cannot fit is refused before it is read, on its
	// Content-Length when it has one, else when the reading passes the cap.
	limit := execute.MaxBody(p.set.maxUpload)
	if r.ContentLength > limit {
		return 0, execute.ErrTooLarge
	}
	if r.ContentLength > 0 {
		if e := p.rates.admitBytes(d.service, r.ContentLength, time.Now()); e != nil {
			return 0, e
		}
	}
	// A slow sender holds its bytes only this long.
	http.NewResponseController(w).SetReadDeadline(time.Now().Add(p.set.bodyTimeout))
	body, held, err := p.bodies.readBody(w, r, d.service, limit)
	var tooLarge *http.MaxBytesError
	switch {
	case errors.Is(err, errPoolFull):
		return held, &execute.Error{Status: http.StatusServiceUnavailable, Message: "The proxy is holding as many bodies as it may; retry.", RetryAfter: 1}
	case errors.As(err, &tooLarge):
		return held, execute.ErrTooLarge
	case err != nil:
		return held, execute.ErrInvalidJSON
	}
	if r.ContentLength < 0 {
		if e := p.rates.admitBytes(d.service, int64(len(body)), time.Now()); e != nil {
			return held, e
		}
	}
	contentType, body, apiErr := execute.Decode(r.Header.Get("Content-Type"), body, d.variant, p.set.maxUpload)
	if apiErr != nil {
		return held, apiErr
	}
	d.contentType, d.body = contentType, body
	return held, nil
}

// authorize applies the allowlist and, when keys are configured, the
// caller's bearer key; it returns the caller's service name.
func (p *proxy) authorize(r *http.Request, webhookID string) (string, bool) {
	if !p.set.allow.allows(webhookID) {
		return "", false
	}
	if len(p.set.keys) == 0 {
		return "", true
	}
	return p.service(r)
}

// service is the service whose bearer key r carries.
func (p *proxy) service(r *http.Request) (string, bool) {
	key, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return "", false
	}
	for k, service := range p.set.keys {
		if subtle.ConstantTimeCompare([]byte(k), []byte(key)) == 1 {
			return service, true
		}
	}
	return "", false
}

// refuse answers e and counts it under a reason from a fixed set; the
// log names the webhook by its checked id only.
func (p *proxy) refuse(w http.ResponseWriter, r *http.Request, webhookID string, e *execute.Error) {
	reason := "invalid"
	switch {
	case e == errNoRoute:
		reason = "no_route"
	case e.Status == http.StatusUnauthorized:
		reason = "bad_token"
	case e.Status == http.StatusForbidden:
		reason = "forbidden"
	case e.Status == http.StatusRequestEntityTooLarge:
		reason = "too_large"
	case e.Status == http.StatusTooManyRequests && e.Code == codeOverBudget:
		reason = "over_budget"
	case e.Status == http.StatusTooManyRequests && e.Code == codeRateLimited:
		reason = "rate_limited"
	case e.Status == http.StatusTooManyRequests:
		reason = "queue_full"
	case e.Status == http.StatusNotFound:
		reason = "dead"
	case e.Status == http.StatusServiceUnavailable:
		reason = "unavailable"
	}
	p.metrics.refused.WithLabelValues(reason).Inc()
	p.log.DebugContext(r.Context(), "webhook request refused", "webhook", webhookID, "reason", reason, "status", e.Status)
	// Most refusals come before the body is read: closing the connection
	// spares reading (up to 256 KiB) of what the caller keeps sending.
	w.Header().Set("Connection", "close")
	writeError(w, e)
}

// await holds a ?wait=true caller until its delivery finishes or the wait
// timeout passes: Discord's message, Discord's error, or 202 with the
// delivery's id to look up later.
func (p *proxy) await(w http.ResponseWriter, r *http.Request, id int64) {
	done, cancel := p.waiters.wait(id)
	defer cancel()
	timeout := time.NewTimer(p.set.wait)
	defer timeout.Stop()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		st, err := p.status(r.Context(), id)
		if err == nil && st.State != "pending" {
			writeFinished(w, st)
			return
		}
		select {
		case <-done:
		case <-tick.C:
		case <-timeout.C:
			writePending(w, id)
			return
		case <-p.stopping:
			writePending(w, id)
			return
		case <-r.Context().Done():
			return
		}
	}
}

// writePending answers 202 with the delivery's id, to look up later.
func writePending(w http.ResponseWriter, id int64) {
	writeJSON(w, http.StatusAccepted, map[string]any{"id": strconv.FormatInt(id, 10), "state": "pending",
		"status_url": "/proxy/deliveries/" + strconv.FormatInt(id, 10)})
}

// writeFinished answers a finished delivery as Discord answered it.
func writeFinished(w http.ResponseWriter, st deliveryStatus) {
	switch {
	case st.State == "delivered" && st.Variant == "slack":
		writeJSON(w, http.StatusOK, "ok")
		return
	case st.State == "delivered" && st.Variant == "github":
		w.WriteHeader(http.StatusNoContent)
		return
	case st.State == "delivered":
		writeJSON(w, http.StatusOK, st.Message)
		return
	}
	status := st.FailStatus
	body := json.RawMessage(st.Reason)
	if status == 0 || !json.Valid(body) {
		status = http.StatusBadGateway
		body, _ = json.Marshal(map[string]any{"code": 0, "message": st.Reason})
	}
	writeJSON(w, status, body)
}

func writeError(w http.ResponseWriter, e *execute.Error) {
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(e.RetryAfter))))
	}
	if e.Status == http.StatusTooManyRequests {
		// Discord's rate-limit body, which client libraries read.
		writeJSON(w, e.Status, map[string]any{"message": "You are being rate limited.", "retry_after": e.RetryAfter, "global": false, "code": 0})
		return
	}
	writeJSON(w, e.Status, e)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
