package interaction

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/herald-bot/herald/internal/discord/rest"
)

// Discord's Interactions Endpoint URL ("Overview of Interactions" ›
// "Setting Up an Endpoint"): each interaction is POSTed with
// X-Signature-Ed25519, the signature of X-Signature-Timestamp + body by
// the application's key, and is answered in the HTTP response.
const (
	headerSignature = "X-Signature-Ed25519"
	headerTimestamp = "X-Signature-Timestamp"
)

// The endpoint faces the internet. A request is refused before its body
// is read when its headers cannot be Discord's; a body is read up to
// maxInteractionBody; a timestamp further than maxSkew from now is
// refused, so a captured request cannot be replayed later (a replay
// within the window finds its work in the ledger and changes nothing).
const (
	maxInteractionBody = 1 << 20
	maxSkew            = 5 * time.Second
)

// A body is read before its signature can be checked, so the requests
// read and served at once are bounded: at most maxInFlight, holding at
// most maxInFlight × maxInteractionBody, however many callers send. The
// rest wait, holding only their headers, for at most admitWait — by
// then Discord has given up on the interaction — and are refused with
// 503. The bound also keeps a burst from being served by thousands of
// goroutines at once, each slower for the others: in `herald bench
// scale` (3 processes and their simulator on 2 cores, 2,000 clicks a
// second asked) 4 runs without it missed 14, 763, 0 and 84 deadlines,
// 4 with it none.
const (
	maxInFlight = 64
	admitWait   = ackTimeout
)

// Why the endpoint refused a request: the values of the metric's reason
// label.
const (
	refusedMethod    = "method"
	refusedSignature = "signature"
	refusedStale     = "stale"
	refusedTooLarge  = "too_large"
	refusedMalformed = "malformed"
	refusedBusy      = "busy"
)

// Endpoint serves Discord's Interactions Endpoint URL: it checks each
// request's signature with the application's public key, answers PING
// with PONG and every other interaction through the fast path, writing
// the answer as the HTTP response. It keeps no state between requests,
// so any number of herald processes may serve it behind a load balancer.
type Endpoint struct {
	fp      *FastPath
	key     ed25519.PublicKey
	now     func() time.Time
	refused *prometheus.CounterVec
	// slots holds a token per request being read or served; wait is
	// admitWait (tests shorten it).
	slots   chan struct{}
	wait    time.Duration
	waiting prometheus.Gauge
}

// NewEndpoint serves interactions signed by the key whose hex form is
// verifyKey (the application's verify_key) through fp. now is the clock
// timestamps are checked against (nil: time.Now).
func NewEndpoint(fp *FastPath, verifyKey string, reg prometheus.Registerer, now func() time.Time) (*Endpoint, error) {
	key, err := hex.DecodeString(verifyKey)
	if err != nil || len(key) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("interaction: the application's verify_key %q is not a hex Ed25519 public key", verifyKey)
	}
	if now == nil {
		now = time.Now
	}
	e := &Endpoint{fp: fp, key: key, now: now, refused: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "herald_interactions_endpoint_refused_total",
		Help: "Requests to the Interactions Endpoint URL refused, by reason (method, signature, stale, too_large, malformed, busy).",
	}, []string{"reason"}),
		slots: make(chan struct{}, maxInFlight), wait: admitWait,
		waiting: prometheus.NewGauge(prometheus.GaugeOpts{Name: "herald_interactions_endpoint_waiting",
			Help: "Requests to the Interactions Endpoint URL waiting for one of the slots that bound those read and served at once."}),
	}
	for _, r := range []string{refusedMethod, refusedSignature, refusedStale, refusedTooLarge, refusedMalformed, refusedBusy} {
		e.refused.WithLabelValues(r)
	}
	inFlight := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "herald_interactions_endpoint_in_flight",
		Help: "Requests to the Interactions Endpoint URL being read or served (at most " + strconv.Itoa(maxInFlight) + ")."},
		func() float64 { return float64(len(e.slots)) })
	if reg != nil {
		for _, c := range []prometheus.Collector{e.refused, e.waiting, inFlight} {
			if err := reg.Register(c); err != nil {
				return nil, err
			}
		}
	}
	return e, nil
}

func (e *Endpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		e.refuse(w, refusedMethod, http.StatusMethodNotAllowed)
		return
	}
	sig, err := hex.DecodeString(r.Header.Get(headerSignature))
	if err != nil || len(sig) != ed25519.SignatureSize {
		e.refuse(w, refusedSignature, http.StatusUnauthorized)
		return
	}
	ts := r.Header.Get(headerTimestamp)
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		e.refuse(w, refusedSignature, http.StatusUnauthorized)
		return
	}
	if skew := e.now().Sub(time.Unix(sec, 0)); skew > maxSkew || skew < -maxSkew {
		e.refuse(w, refusedStale, http.StatusUnauthorized)
		return
	}
	if !e.admit(r.Context()) {
		e.refuse(w, refusedBusy, http.StatusServiceUnavailable)
		return
	}
	defer func() { <-e.slots }()
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxInteractionBody))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		e.refuse(w, refusedTooLarge, http.StatusRequestEntityTooLarge)
		return
	case err != nil:
		e.refuse(w, refusedMalformed, http.StatusBadRequest)
		return
	}
	if !ed25519.Verify(e.key, append([]byte(ts), body...), sig) {
		e.refuse(w, refusedSignature, http.StatusUnauthorized)
		return
	}
	var i discordgo.Interaction
	if err := json.Unmarshal(body, &i); err != nil || i.ID == "" {
		e.refuse(w, refusedMalformed, http.StatusBadRequest)
		return
	}
	if i.Type == discordgo.InteractionPing {
		writeJSON(w, &discordgo.InteractionResponse{Type: discordgo.InteractionResponsePong})
		return
	}
	answered := false
	e.fp.Serve(&i, func(ctx context.Context, resp *discordgo.InteractionResponse) error {
		answered = true
		return e.answer(ctx, w, &i, resp)
	})
	if !answered {
		// A replay, or past Discord's 3 s: nothing to say. 202 without a
		// body is how an application tells Discord it has no answer here.
		w.WriteHeader(http.StatusAccepted)
	}
}

// admit takes a slot for a request, waiting at most e.wait for one, or
// until ctx ends. A caller that hung up is not noticed while it waits:
// the server watches the connection only once the body is read, so the
// wait is bounded by time.
func (e *Endpoint) admit(ctx context.Context) bool {
	select {
	case e.slots <- struct{}{}:
		return true
	default:
	}
	e.waiting.Inc()
	defer e.waiting.Dec()
	t := time.NewTimer(e.wait)
	defer t.Stop()
	select {
	case e.slots <- struct{}{}:
		return true
	case <-t.C:
		return false
	case <-ctx.Done():
		return false
	}
}

// answer writes resp as the HTTP response. An HTTP response carries no
// files: an answer with files goes through the callback route, and the
// response is then 202 without a body, as Discord asks ("Interaction
// Callback").
func (e *Endpoint) answer(ctx context.Context, w http.ResponseWriter, i *discordgo.Interaction, resp *discordgo.InteractionResponse) error {
	body, files := rest.CallbackBody(resp)
	if len(files) > 0 {
		if err := e.fp.respond(ctx, i, resp); err != nil {
			return err
		}
		w.WriteHeader(http.StatusAccepted)
		return nil
	}
	return writeJSON(w, body)
}

// writeJSON writes a 200 JSON response and flushes it, so that the work
// the fast path then releases cannot overtake it.
func writeJSON(w http.ResponseWriter, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	if _, err := w.Write(b); err != nil {
		return err
	}
	return http.NewResponseController(w).Flush()
}

// refuse answers a request that is not Discord's, counting why; nothing
// of the request is logged.
func (e *Endpoint) refuse(w http.ResponseWriter, reason string, status int) {
	e.refused.WithLabelValues(reason).Inc()
	http.Error(w, http.StatusText(status), status)
}
