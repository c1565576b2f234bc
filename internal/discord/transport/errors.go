package transport

import (
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strings"
	"time"
)

// Class is what the job layer should do about a failed request.
type Class string

const (
	// RateLimited: wait RetryAfter, then try again; nothing is wrong.
	RateLimited Class = "rate_limited"
	// Transient: Discord or the network failed; retry later with backoff.
	Transient Class = "transient"
	// Permission: the bot lacks a permission (50001, 50013); needs configuration.
	Permission Class = "permission"
	// NotFound: the target is gone (10003, 10008, 10011, 10015, 10062...).
	NotFound Class = "not_found"
	// Invalid: Discord rejected the request itself (50035 and other 4xx); never retry.
	Invalid Class = "invalid"
	// UnknownOutcome: a non-idempotent request was written, then its
	// connection died or a 5xx came back; reconcile before doing anything else.
	UnknownOutcome Class = "unknown_outcome"
	// Unauthorized: the token is bad; all REST has stopped.
	Unauthorized Class = "unauthorized"
	// Blocked: Discord's edge (Cloudflare) refused the request — a 403 with
	// code 40333 or an HTML page instead of Discord's JSON — before the API
	// saw it: no permission is missing. Every request waits RetryAfter.
	Blocked Class = "blocked"
)

// Classify maps any error the transport returns to its Class, and reports
// the wait Discord or the transport asked for when there is one.
func Classify(err error) (Class, time.Duration) {
	var (
		rl  *RateLimitedError
		api *APIError
		uo  *UnknownOutcomeError
		tr  *TransientError
		cb  *CircuitOpenError
		qt  *QueueTimeoutError
		qf  *QueueFullError
		ib  *InvalidBudgetError
	)
	switch {
	case err == nil:
		return "", 0
	case errors.As(err, &rl):
		return RateLimited, rl.RetryAfter
	case errors.As(err, &ib):
		return RateLimited, ib.RetryAfter
	case errors.As(err, &api):
		return api.Class(), api.RetryAfter
	case errors.Is(err, ErrUnauthorized):
		return Unauthorized, 0
	case errors.As(err, &uo):
		return UnknownOutcome, 0
	case errors.As(err, &cb):
		return Transient, cb.RetryAfter
	case errors.As(err, &tr), errors.As(err, &qt), errors.As(err, &qf):
		return Transient, 0
	default:
		return Transient, 0
	}
}

// Unsent reports whether err proves the request was not carried out:
// herald held it back (a wait longer than the caller allowed, a full or
// timed-out queue, an open circuit, the invalid-request budget), or
// Discord refused it with a 429 or at its edge. A 5xx, a lost connection
// or a refusal by the API itself prove nothing of the kind or are not
// about sending.
func Unsent(err error) bool {
	var (
		rl  *RateLimitedError
		ib  *InvalidBudgetError
		cb  *CircuitOpenError
		qt  *QueueTimeoutError
		qf  *QueueFullError
		api *APIError
	)
	switch {
	case errors.As(err, &rl), errors.As(err, &ib), errors.As(err, &cb), errors.As(err, &qt), errors.As(err, &qf):
		return true
	case errors.As(err, &api):
		return api.Status == http.StatusTooManyRequests || api.Class() == Blocked
	}
	return false
}

// ErrUnauthorized is returned for every request once Discord answered 401
// to the bot token: the token is invalid and retrying would only count
// invalid requests. A 401 on a webhook or interaction route (50027 Invalid
// Webhook Token) does not stop anything else.
var ErrUnauthorized = errors.New("discord: unauthorized: the bot token was rejected; REST stopped until restart")

// APIError is a non-2xx answer Discord gave in its JSON error shape.
type APIError struct {
	Route   string
	Status  int
	Code    int    // Discord's JSON error code, e.g. 50013
	Message string // Discord's message
	// Errors is the field-by-field detail of a 50035 Invalid Form Body.
	Errors json.RawMessage
	// HTML is set when the answer was an HTML page, which only Discord's
	// edge sends, not its JSON.
	HTML bool
	// RetryAfter is how long the engine holds every request after Discord's
	// edge blocked this one (class Blocked).
	RetryAfter time.Duration
}

func (e *APIError) Error() string {
	return fmt.Sprintf("discord: %s: %d %s (code %d: %s)", e.Route, e.Status, http.StatusText(e.Status), e.Code, e.Message)
}

// TokenRefused reports whether Discord refused the webhook or interaction
// token in the path: 10015 Unknown Webhook or 50027 Invalid Webhook Token.
func (e *APIError) TokenRefused() bool {
	return e.Code == codeUnknownWebhook || e.Code == codeInvalidWebhookToken
}

// Class classifies the answer by Discord's error code first, then status.
func (e *APIError) Class() Class {
	switch {
	case e.Code == codeInvalidWebhookToken: // that webhook or interaction is unusable
		return NotFound
	case e.Status == http.StatusUnauthorized && strings.Contains(e.Route, "_token}"):
		// The token in the path was refused, not the bot's (Route.TokenAuth).
		return NotFound
	case e.Status == http.StatusUnauthorized:
		return Unauthorized
	case e.Status == http.StatusForbidden && (e.Code == codeEdgeBlocked || e.HTML):
		return Blocked
	case e.Code == 50001 || e.Code == 50013 || e.Status == http.StatusForbidden:
		return Permission
	case e.Code >= 10001 && e.Code <= 10099, e.Status == http.StatusNotFound:
		return NotFound
	case e.Status >= 500:
		return Transient
	default:
		return Invalid
	}
}

// codeEdgeBlocked is Discord's JSON code for a request its Cloudflare
// blocks, "This can often be resolved by setting a proper User Agent"
// (Opcodes and Status Codes).
const codeEdgeBlocked = 40333

func parseAPIError(route string, status int, header http.Header, body []byte) *APIError {
	e := &APIError{Route: route, Status: status}
	mt, _, _ := mime.ParseMediaType(header.Get("Content-Type"))
	e.HTML = mt == "text/html"
	var b struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Errors  json.RawMessage `json:"errors"`
	}
	if json.Unmarshal(body, &b) == nil {
		e.Code, e.Message, e.Errors = b.Code, b.Message, b.Errors
	}
	if e.Message == "" {
		e.Message = http.StatusText(status)
	}
	return e
}

// RateLimitedError means the request was not sent (or sent and answered
// 429 more than MaxRetries times) because of a rate limit. A caller that
// set WithMaxWait gets it at once instead of waiting longer than it allowed.
type RateLimitedError struct {
	Route      string
	Bucket     string
	Scope      string // user, shared, global, edge (a header-less block), degraded (Discord failing: degraded.go)
	RetryAfter time.Duration
}

func (e *RateLimitedError) Error() string {
	return fmt.Sprintf("discord: %s: rate limited (scope %s, bucket %s), retry after %s", e.Route, e.Scope, e.Bucket, e.RetryAfter)
}

// TransientError is a 5xx or network failure that outlived MaxRetries.
type TransientError struct {
	Route    string
	Bucket   string
	Status   int // 0 for a network error
	Attempts int
	Err      error
}

func (e *TransientError) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("discord: %s: %d after %d attempts", e.Route, e.Status, e.Attempts)
	}
	return fmt.Sprintf("discord: %s: network error after %d attempts: %v", e.Route, e.Attempts, e.Err)
}

func (e *TransientError) Unwrap() error { return e.Err }

// UnknownOutcomeError means a non-idempotent request was written but no
// answer proves what became of it: the connection was lost, or a 5xx came
// back, which Discord or a proxy in front of it may send after applying
// the request. Discord may or may not have applied it; the engine never
// resends it, the caller reconciles.
type UnknownOutcomeError struct {
	Route  string
	Status int   // the 5xx answered, 0 for a lost connection
	Err    error // the network error, redacted (no URL); nil for a 5xx
}

func (e *UnknownOutcomeError) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("discord: %s: outcome unknown: answered %d %s", e.Route, e.Status, http.StatusText(e.Status))
	}
	return fmt.Sprintf("discord: %s: outcome unknown: %v", e.Route, e.Err)
}

func (e *UnknownOutcomeError) Unwrap() error { return e.Err }

// QueueTimeoutError means the request waited in its bucket's queue longer
// than the configured queue timeout.
type QueueTimeoutError struct {
	Route            string
	Bucket           string
	Waited           time.Duration
	QueueLen         int
	GlobalGateActive bool
}

func (e *QueueTimeoutError) Error() string {
	return fmt.Sprintf("discord: %s: waited %s in bucket %s (queue %d, global gate %t)", e.Route, e.Waited, e.Bucket, e.QueueLen, e.GlobalGateActive)
}

// QueueFullError means the bucket's queue was at its maximum depth.
type QueueFullError struct {
	Route    string
	Bucket   string
	QueueLen int
	MaxDepth int
}

func (e *QueueFullError) Error() string {
	return fmt.Sprintf("discord: %s: bucket %s queue full (%d of %d)", e.Route, e.Bucket, e.QueueLen, e.MaxDepth)
}

// CircuitOpenError means the bucket failed too often in a row; no request
// is sent until RetryAfter, when one probe goes through.
type CircuitOpenError struct {
	Route               string
	Bucket              string
	ConsecutiveFailures int
	OpenSince           time.Time
	RetryAfter          time.Duration
	Waited              time.Duration
	QueueLen            int
}

func (e *CircuitOpenError) Error() string {
	return fmt.Sprintf("discord: %s: circuit open for bucket %s after %d consecutive failures (since %s), retry after %s",
		e.Route, e.Bucket, e.ConsecutiveFailures, e.OpenSince.Format(time.RFC3339), e.RetryAfter)
}

// InvalidBudgetError means sending would approach Discord's limit of
// invalid requests (401, 403, non-shared 429) per 10 minutes, past which
// Cloudflare blocks the bot's IP; the transport refuses until the window
// slides.
type InvalidBudgetError struct {
	Budget     string // bot, interactions or webhooks
	Count      int
	Limit      int
	RetryAfter time.Duration
}

func (e *InvalidBudgetError) Error() string {
	return fmt.Sprintf("discord: %d invalid requests of %s calls in 10 minutes (budget %d): refusing them for %s", e.Count, e.Budget, e.Limit, e.RetryAfter)
}

// CancelledError is returned to queued requests dropped by CancelAll.
type CancelledError struct {
	Route  string
	Reason string
}

func (e *CancelledError) Error() string {
	return fmt.Sprintf("discord: %s: cancelled: %s", e.Route, e.Reason)
}
