package webhookproxy

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/time/rate"

	"github.com/herald-bot/herald/internal/discord/transport"
	"github.com/herald-bot/herald/internal/webhookproxy/execute"
)

// hasher names a webhook token by an HMAC keyed with the database's
// secret (webhookproxy_secret): comparisons are of the full hash, and
// what is shown (fingerprint) cannot be searched for a guessed token
// without the key. The key is read at first use: herald may be built
// before its migrations ran.
type hasher struct {
	db  *pgxpool.Pool
	mu  sync.Mutex
	key []byte
}

func newHasher(db *pgxpool.Pool) *hasher { return &hasher{db: db} }

func (h *hasher) loadKey(ctx context.Context) ([]byte, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.key == nil {
		if err := h.db.QueryRow(ctx, `SELECT key FROM webhookproxy_secret WHERE id = 1`).Scan(&h.key); err != nil {
			return nil, fmt.Errorf("webhookproxy: read the token key: %w", err)
		}
	}
	return h.key, nil
}

// tokenHash is the keyed hash of one webhook's token.
type tokenHash [sha256.Size]byte

func (h *hasher) hash(ctx context.Context, webhookID, token string) (tokenHash, error) {
	var out tokenHash
	key, err := h.loadKey(ctx)
	if err != nil {
		return out, err
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(webhookID))
	m.Write([]byte{0})
	m.Write([]byte(token))
	m.Sum(out[:0])
	return out, nil
}

// fingerprint is how status output names a token: a prefix of its keyed
// hash. Logs never name one.
func (h tokenHash) fingerprint() string { return hex.EncodeToString(h[:6]) }

// verdict is what is known of one webhook id and token.
type verdict int

const (
	// unverified: Discord could not be asked (down, blocked, slow); the
	// delivery is accepted and its drain asks before it sends.
	unverified verdict = iota
	valid
	badToken       // 401 Invalid Webhook Token
	unknownWebhook // 404 Unknown Webhook
)

// answers name the verdicts in webhookproxy_tokens.answer.
var answers = map[verdict]string{valid: "valid", badToken: "invalid_token", unknownWebhook: "unknown_webhook"}

// refusal is the answer Discord gave for a bad pair, as the caller gets it.
func (v verdict) refusal() *execute.Error {
	switch v {
	case badToken:
		return execute.ErrInvalidToken
	case unknownWebhook:
		return execute.ErrUnknownWebhook
	}
	return nil
}

// Bounds on asking Discord: a verification is one GET on the webhook's
// own bucket, so a flood of new tokens waits there; past these, callers
// are told to come back instead of piling up.
const (
	verifyTimeout   = 5 * time.Second
	verifyPerCaller = 4
	verifyInFlight  = 16
	// verifyRate bounds the questions per second: GET Webhook with Token
	// carries no bot token, so Discord limits it per IP (50 a second,
	// as for the bot's global limit) and each 429 past that costs an
	// invalid request. A caller gets a part of it, so one flooding new
	// tokens leaves room for another's new webhook.
	verifyRate          = 10
	verifyRatePerCaller = 2
	// verdictTTL is how long an answer is trusted; a token revoked sooner
	// is learned from the delivery Discord refuses.
	verdictTTL = 24 * time.Hour
	// cacheMax bounds the verdicts kept in memory; the table keeps all.
	cacheMax = 50_000
)

// errVerifyBusy: too many verifications in flight for this caller or in
// all; the caller is asked to retry.
var errVerifyBusy = errors.New("webhookproxy: verifications busy")

// webhookReader is the one Discord call verification needs.
type webhookReader interface {
	WebhookWithToken(ctx context.Context, webhookID, token string) (*discordgo.Webhook, error)
}

// verifier answers whether a webhook id and token are good, asking Discord
// at most once per pair (GET Webhook with Token) and only while the
// caller's invalid-request budget allows.
type verifier struct {
	db      *pgxpool.Pool
	discord webhookReader
	hasher  *hasher
	budget  *budget
	now     func() time.Time

	asks     *rate.Limiter
	mu       sync.Mutex
	asksBy   *callerLimits
	cache    map[tokenHash]cached
	flights  map[tokenHash]*flight
	perCall  map[string]int
	inFlight int
}

type cached struct {
	v  verdict
	at time.Time
}

type flight struct {
	done chan struct{}
	v    verdict
	err  error
}

func newVerifier(db *pgxpool.Pool, discord webhookReader, h *hasher, b *budget, now func() time.Time) *verifier {
	return &verifier{db: db, discord: discord, hasher: h, budget: b, now: now, asks: rate.NewLimiter(verifyRate, verifyRate), asksBy: newCallerLimits(verifyRatePerCaller, 2*verifyRatePerCaller),
		cache: map[tokenHash]cached{}, flights: map[tokenHash]*flight{}, perCall: map[string]int{}}
}

// check is the verdict on webhookID and token for caller. An error means
// no verdict: errVerifyBusy, an *overBudget, or a database error.
func (v *verifier) check(ctx context.Context, caller, webhookID, token string) (verdict, error) {
	h, err := v.hasher.hash(ctx, webhookID, token)
	if err != nil {
		return unverified, err
	}
	return v.checkHash(ctx, caller, webhookID, token, h)
}

// checkHash is check for a caller that hashed the token already.
func (v *verifier) checkHash(ctx context.Context, caller, webhookID, token string, h tokenHash) (verdict, error) {
	if c, ok := v.recall(h); ok {
		return c, nil
	}
	got, stored, err := v.stored(ctx, webhookID, h)
	if err != nil {
		return unverified, err
	}
	if stored {
		v.remember(h, got)
		return got, nil
	}
	f, leader, err := v.join(h, caller)
	if err != nil {
		return unverified, err
	}
	if leader {
		f.v, f.err = v.ask(ctx, caller, webhookID, token, h)
		v.land(h, caller, f)
	}
	select {
	case <-f.done:
		return f.v, f.err
	case <-ctx.Done():
		return unverified, ctx.Err()
	}
}

// recall is a fresh verdict from memory.
func (v *verifier) recall(h tokenHash) (verdict, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	c, ok := v.cache[h]
	if !ok || v.now().Sub(c.at) > verdictTTL {
		return unverified, false
	}
	return c.v, true
}

func (v *verifier) remember(h tokenHash, got verdict) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(v.cache) >= cacheMax {
		// Forget an arbitrary half: the table still has every verdict.
		n := 0
		for k := range v.cache {
			if n >= cacheMax/2 {
				break
			}
			delete(v.cache, k)
			n++
		}
	}
	v.cache[h] = cached{v: got, at: v.now()}
}

// vouched reports whether some token of the webhook is known good. A
// token that cannot be verified now is taken on trust (stored, verified
// by its drain before it is sent) only for a webhook nobody vouched for
// yet: a first post while Discord is unreachable. Beside a known token
// it is refused, so unverifiable bad tokens never sit in a queue honest
// deliveries share.
func (v *verifier) vouched(ctx context.Context, webhookID string) (bool, error) {
	var ok bool
	err := v.db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM webhookproxy_tokens WHERE webhook_id = $1 AND answer = 'valid')`, webhookID).Scan(&ok)
	if err != nil {
		return false, fmt.Errorf("webhookproxy: read known tokens: %w", err)
	}
	return ok, nil
}

// forget marks a pair bad after Discord refused a delivery with it: the
// webhook's token was reset since it was verified.
func (v *verifier) forget(ctx context.Context, webhookID, token string) error {
	h, err := v.hasher.hash(ctx, webhookID, token)
	if err != nil {
		return err
	}
	v.remember(h, badToken)
	return v.store(ctx, webhookID, h, badToken)
}

func (v *verifier) stored(ctx context.Context, webhookID string, h tokenHash) (verdict, bool, error) {
	var answer string
	err := v.db.QueryRow(ctx, `SELECT answer FROM webhookproxy_tokens
		WHERE webhook_id = $1 AND token_hash = $2 AND checked_at > now() - make_interval(secs => $3)`,
		webhookID, h[:], verdictTTL.Seconds()).Scan(&answer)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return unverified, false, nil
	case err != nil:
		return unverified, false, fmt.Errorf("webhookproxy: read token verdict: %w", err)
	}
	for got, a := range answers {
		if a == answer {
			return got, true, nil
		}
	}
	return unverified, false, fmt.Errorf("webhookproxy: token verdict %q unknown", answer)
}

func (v *verifier) store(ctx context.Context, webhookID string, h tokenHash, got verdict) error {
	_, err := v.db.Exec(ctx, `INSERT INTO webhookproxy_tokens (webhook_id, token_hash, answer) VALUES ($1, $2, $3)
		ON CONFLICT (webhook_id, token_hash) DO UPDATE SET answer = EXCLUDED.answer, checked_at = now()`,
		webhookID, h[:], answers[got])
	if err != nil {
		return fmt.Errorf("webhookproxy: store token verdict: %w", err)
	}
	return nil
}

// join makes the caller wait on the pair's verification in flight, or
// leads a new one within the bounds.
func (v *verifier) join(h tokenHash, caller string) (*flight, bool, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if f, ok := v.flights[h]; ok {
		return f, false, nil
	}
	if v.perCall[caller] >= verifyPerCaller || v.inFlight >= verifyInFlight {
		return nil, false, errVerifyBusy
	}
	if err := v.budget.allow(caller); err != nil {
		return nil, false, err
	}
	if now := v.now(); !v.asksBy.of(caller).AllowN(now, 1) || !v.asks.AllowN(now, 1) {
		return nil, false, errVerifyBusy
	}
	f := &flight{done: make(chan struct{})}
	v.flights[h] = f
	v.perCall[caller]++
	v.inFlight++
	return f, true, nil
}

func (v *verifier) land(h tokenHash, caller string, f *flight) {
	v.mu.Lock()
	delete(v.flights, h)
	v.perCall[caller]--
	if v.perCall[caller] == 0 {
		delete(v.perCall, caller)
	}
	v.inFlight--
	v.mu.Unlock()
	close(f.done)
}

// ask is GET Webhook with Token. A refusal is charged to the caller's
// budget and kept; anything else Discord or the network says leaves the
// pair unverified. A good pair records where the webhook posts.
func (v *verifier) ask(ctx context.Context, caller, webhookID, token string, h tokenHash) (verdict, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), verifyTimeout)
	defer cancel()
	hook, err := v.discord.WebhookWithToken(ctx, webhookID, token)
	got := valid
	if err != nil {
		var api *transport.APIError
		switch {
		case !errors.As(err, &api):
			return unverified, nil
		case api.Code == execute.ErrInvalidToken.Code || api.Status == 401:
			got = badToken
		case api.Code == execute.ErrUnknownWebhook.Code:
			got = unknownWebhook
		default:
			return unverified, nil
		}
		v.budget.spend(caller)
	}
	if err := v.store(ctx, webhookID, h, got); err != nil {
		return unverified, err
	}
	if got == valid {
		if err := recordWebhook(ctx, v.db, hook); err != nil {
			return unverified, err
		}
	}
	v.remember(h, got)
	return got, nil
}
