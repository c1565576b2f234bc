package sim

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/herald-bot/herald/internal/discord/sim/jsontree"
)

// Discord's outgoing webhooks for interactions ("Overview of
// Interactions" › "Configuring an Interactions Endpoint URL", "Receiving
// and Responding"): once an application has an Interactions Endpoint URL,
// every interaction is POSTed there, signed with the application's
// Ed25519 key, instead of being sent as INTERACTION_CREATE — the two are
// mutually exclusive — and the HTTP response is its initial response.
const (
	HeaderSignature = "X-Signature-Ed25519"
	HeaderTimestamp = "X-Signature-Timestamp"
	// outgoingAgent is the User-Agent of Discord's interaction webhooks.
	outgoingAgent = "Discord-Interactions/1.0 (+https://discord.com)"
)

// How an interaction's initial response reached the simulator.
const (
	ViaCallback = "callback" // POST /interactions/{id}/{token}/callback
	ViaResponse = "response" // the body of the endpoint's HTTP response
)

// applicationKey is the application's key pair, derived from its id so
// that it survives Reset as the application does.
func applicationKey(appID string) ed25519.PrivateKey {
	seed := sha256.Sum256([]byte("herald-sim/" + appID))
	return ed25519.NewKeyFromSeed(seed[:])
}

// Sign returns the headers Discord sends with an interaction body at time
// at: X-Signature-Timestamp (Unix seconds) and X-Signature-Ed25519, the
// hex signature of timestamp+body by the application's key. Tests use it
// to replay or age deliveries.
func (s *Server) Sign(body []byte, at time.Time) http.Header {
	ts := strconv.FormatInt(at.Unix(), 10)
	sig := ed25519.Sign(s.key, append([]byte(ts), body...))
	return http.Header{HeaderSignature: {hex.EncodeToString(sig)}, HeaderTimestamp: {ts}}
}

// errEndpointUnverified is Discord's answer to saving a URL that fails
// its checks.
func errEndpointUnverified() *apiError {
	var f formErrors
	f.add("interactions_endpoint_url", "APPLICATION_INTERACTIONS_ENDPOINT_URL_INVALID", "The specified interactions endpoint url could not be verified.")
	return f.err()
}

// SetInteractionsEndpoint saves the application's Interactions Endpoint
// URL ("" removes it, and interactions go back to the gateway). As
// Discord does on saving, it POSTs a signed PING, which must be answered
// 200 with a JSON {"type": 1}, and a PING with an invalid signature, which
// must be answered 401; an endpoint failing either is refused with
// 50035 and the setting stays as it was. The error is an *apiError.
func (s *Server) SetInteractionsEndpoint(endpoint string) error {
	if endpoint != "" {
		if u, err := url.Parse(endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			var f formErrors
			f.add("interactions_endpoint_url", "URL_TYPE_INVALID_URL", "Not a well formed URL.")
			return f.err()
		}
		if err := s.verifyEndpoint(endpoint); err != nil {
			s.opts.Logger.Info("sim: interactions endpoint refused", "reason", err)
			return errEndpointUnverified()
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.endpoint = endpoint
	return nil
}

// verifyEndpoint runs Discord's two checks of a URL being saved.
func (s *Server) verifyEndpoint(endpoint string) error {
	s.mu.Lock()
	ping, err := json.Marshal(map[string]any{
		"id": s.st.ids.next(s.clock.Now()), "application_id": s.st.appID, "type": 1,
		"token": "sim-ping-" + newToken(), "version": 1, "user": s.st.renderUser(s.st.ownerID),
	})
	s.mu.Unlock()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.scaled(interactionDeadline))
	defer cancel()
	a, err := s.post(ctx, endpoint, ping, true)
	if err != nil {
		return fmt.Errorf("signed PING: %w", err)
	}
	var pong struct {
		Type *int `json:"type"`
	}
	if a.status != http.StatusOK || !a.json() || json.Unmarshal(a.body, &pong) != nil || pong.Type == nil || *pong.Type != 1 {
		return fmt.Errorf("signed PING answered %d %q, want 200 {\"type\": 1}", a.status, a.body)
	}
	if a, err = s.post(ctx, endpoint, ping, false); err != nil {
		return fmt.Errorf("PING with an invalid signature: %w", err)
	}
	if a.status != http.StatusUnauthorized {
		return fmt.Errorf("PING with an invalid signature answered %d, want 401", a.status)
	}
	return nil
}

// answer is an endpoint's HTTP response.
type answer struct {
	status      int
	contentType string
	body        []byte
}

// json reports whether the answer says it is JSON: Discord requires a
// valid Content-Type.
func (a answer) json() bool {
	mt, _, _ := mime.ParseMediaType(a.contentType)
	return mt == "application/json"
}

// post sends an interaction body to the endpoint, signed — or, when valid
// is false, with a well-formed signature of other bytes — and reads at
// most maxBody of the answer.
func (s *Server) post(ctx context.Context, endpoint string, body []byte, valid bool) (answer, error) {
	h := s.Sign(body, s.clock.Now())
	if !valid {
		h = s.Sign(append(body, ' '), s.clock.Now())
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return answer{}, err
	}
	req.Header = h
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", outgoingAgent)
	res, err := s.outgoing.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, maxBody+1))
	if err == nil && len(b) > maxBody {
		err = errors.New("answer larger than Discord reads")
	}
	return answer{status: res.StatusCode, contentType: res.Header.Get("Content-Type"), body: b}, err
}

// deliver POSTs a new interaction to the endpoint and takes the answer as
// its initial response, validated as the callback route validates one.
// No answer within the 3 seconds, another status, or an invalid body
// leaves the interaction unanswered — "This interaction failed" — with
// the reason in its status. A 202 without a body says the application
// answered through the callback route instead.
func (s *Server) deliver(endpoint string, created InteractionCreated, payload map[string]any) {
	ctx, cancel := context.WithTimeout(context.Background(), s.scaled(interactionDeadline))
	defer cancel()
	body, err := jsontree.Marshal(payload)
	a := answer{}
	if err == nil {
		a, err = s.post(ctx, endpoint, body, true)
	}
	arrived := s.clock.Now()
	failure := ""
	switch {
	case err != nil:
		failure = "no answer: " + err.Error()
	case a.status == http.StatusAccepted && len(bytes.TrimSpace(a.body)) == 0:
		return
	case a.status != http.StatusOK:
		failure = fmt.Sprintf("answered HTTP %d", a.status)
	case !a.json():
		failure = fmt.Sprintf("answered Content-Type %q", a.contentType)
	}
	s.mutate(func(rq *request) error {
		in := s.st.interactions[created.ID]
		if in == nil || in.token != created.Token {
			return nil // the world was reset meanwhile
		}
		if failure == "" {
			rq.r = &http.Request{Method: http.MethodPost, URL: &url.URL{}, Header: http.Header{}}
			rq.params = map[string]string{"interaction_id": in.id, "interaction_token": in.token}
			rq.arrived = arrived
			rq.body = a.body
			if _, apiErr := interactionCallback(s, rq); apiErr != nil {
				failure = "invalid answer: " + apiErr.Error()
			} else {
				in.via = ViaResponse
			}
		}
		in.deliveryError = failure
		return nil
	})
}
