package bench

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/herald-bot/herald/internal/discord/sim"
)

// HostileResult is what `herald bench proxy --hostile --json` prints: the
// same honest load on the webhook proxy alone, then beside one key's
// abuse, in one run against one herald running as a process of its own.
type HostileResult struct {
	Seconds      float64 `json:"seconds"`
	PhaseSeconds float64 `json:"phase_seconds"`
	TimeScale    float64 `json:"time_scale"`
	// The honest load: Services services with keys of their own, each
	// with Callers callers posting small messages to its
	// WebhooksPerService webhooks (one per channel), OfferedPerS posts a
	// second in all; every fourth post waits for its delivery.
	Services           int     `json:"services"`
	Callers            int     `json:"callers_per_service"`
	WebhooksPerService int     `json:"webhooks_per_service"`
	OfferedPerS        float64 `json:"offered_per_s"`
	Quiet              Honest  `json:"quiet"`
	Hostile            Honest  `json:"hostile"`
	// Hostile over quiet: accepted per second, accept p99, delivery p99.
	AcceptRatio      float64 `json:"accept_ratio"`
	AcceptP99Ratio   float64 `json:"accept_p99_ratio"`
	DeliveryP99Ratio float64 `json:"delivery_p99_ratio"`

	// The attacker's key, during the hostile phase: distinct bad tokens
	// on known and FreshWebhooks never-used webhook ids, MaxBodies
	// concurrent bodies whose files hold MaxUploadBytes (the proxy's
	// HERALD_PROXY_MAX_BODY), posts to random thread ids; answers by
	// status ("error": none).
	BadTokens     map[string]int `json:"bad_tokens"`
	FreshWebhooks int            `json:"fresh_webhooks"`
	MaxBodies     int            `json:"max_bodies"`
	MaxUpload     int64          `json:"max_upload_bytes"`
	MaxBodyPosts  map[string]int `json:"max_body_posts"`
	RandomThreads map[string]int `json:"random_threads"`

	// Invalid requests (401, 403, non-shared 429) from the start of the
	// hostile phase to the end of the drain: herald's own count by budget
	// (herald_discord_invalid_requests), and what the simulator saw, in
	// all and on the bot's token (routes without a webhook or
	// interaction token).
	HeraldInvalid map[string]int `json:"herald_invalid"`
	SimInvalid    int            `json:"sim_invalid"`
	SimInvalidBot int            `json:"sim_invalid_bot"`

	// herald's resident memory, its process alone: the highest VmRSS
	// sampled every 50 ms in each phase, and VmHWM at the end of the
	// hostile one.
	RSSQuietMB   float64 `json:"rss_quiet_peak_mb"`
	RSSHostileMB float64 `json:"rss_hostile_peak_mb"`
	HWMMB        float64 `json:"vm_hwm_mb"`

	// /metrics samples: before the hostile phase, after the drain, and
	// the most seen from the one to the other. Bounded means the peak
	// stayed within SeriesAllowance of before, while the attacker chose
	// far more distinct thread ids and tokens than that.
	SeriesBefore    int  `json:"series_before"`
	SeriesPeak      int  `json:"series_peak"`
	SeriesAfter     int  `json:"series_after"`
	SeriesAllowance int  `json:"series_allowance"`
	SeriesBounded   bool `json:"series_bounded"`

	// Honest posts accepted in either phase and never delivered (by the
	// end of the drain), and delivered more than once.
	Lost       int `json:"lost"`
	Duplicates int `json:"duplicates"`
}

// Honest is the honest load's figures in one phase.
type Honest struct {
	Sent          int     `json:"sent"`
	Accepted      int     `json:"accepted"`
	AcceptedPerS  float64 `json:"accepted_per_s"`
	AcceptedShare float64 `json:"accepted_share"`
	// Of the posts answered 204 (not waiting for delivery).
	AcceptP50MS float64 `json:"accept_p50_ms"`
	AcceptP99MS float64 `json:"accept_p99_ms"`
	// From the post to the message in the simulator.
	Delivered     int            `json:"delivered"`
	DeliveryP50MS float64        `json:"delivery_p50_ms"`
	DeliveryP99MS float64        `json:"delivery_p99_ms"`
	Refused       map[string]int `json:"refused,omitempty"`
}

// Targets from the issue, printed beside the figures.
const (
	TargetAcceptRatio = 0.9
	TargetRSSMB       = 300
	// SeriesAllowance is how many /metrics samples an attack may add:
	// label values from fixed sets (refusal reasons, classes, statuses of
	// a route) appearing for the first time, nothing per request.
	SeriesAllowance = 100
)

type hostileConfig struct {
	phase                  time.Duration
	callers, hooksPer      int
	offered                float64
	fresh                  int
	floods, bodies, thread int
	maxUpload              int64
	scale                  float64
	drain                  time.Duration
}

// HostileOption changes a setting of RunHostile.
type HostileOption func(*hostileConfig)

// HostilePhase is how long each phase posts (default 15 s).
func HostilePhase(d time.Duration) HostileOption { return func(c *hostileConfig) { c.phase = d } }

// HostileHonest sets the callers of each of the two honest services, the
// posts per second they offer together, and each service's webhooks
// (default 8, 40/s, 4).
func HostileHonest(callers int, offeredPerS float64, webhooks int) HostileOption {
	return func(c *hostileConfig) { c.callers, c.offered, c.hooksPer = callers, offeredPerS, webhooks }
}

// HostileAttack sets the attacker's concurrent bad-token callers, the
// fresh webhooks they aim at beside the honest ones, the concurrent
// maximum-size bodies and the random-thread callers (default 16, 100,
// 16, 16); a kind with no callers is left out, to tell which hurts.
func HostileAttack(floods, fresh, bodies, threads int) HostileOption {
	return func(c *hostileConfig) { c.floods, c.fresh, c.bodies, c.thread = floods, fresh, bodies, threads }
}

// HostileMaxUpload is the proxy's HERALD_PROXY_MAX_BODY, the files' bytes
// of the attacker's bodies (default Discord's 10 MiB).
func HostileMaxUpload(n int64) HostileOption { return func(c *hostileConfig) { c.maxUpload = n } }

// HostileTimeScale is the simulator's time scale (default 0.02: a
// channel's 30 webhook messages a minute are 25 a second).
func HostileTimeScale(s float64) HostileOption { return func(c *hostileConfig) { c.scale = s } }

// RunHostile measures the webhook proxy under one abusive key beside the
// same honest load alone. herald returns a command that runs `herald run`
// (the environment is added to it); dbURL is a migrated database herald
// may fill, emptied first.
func RunHostile(ctx context.Context, dbURL string, herald func() *exec.Cmd, opts ...HostileOption) (HostileResult, error) {
	c := hostileConfig{phase: 15 * time.Second, callers: 8, offered: 40, hooksPer: 4, fresh: 100, floods: 16, bodies: 16, thread: 16,
		maxUpload: 10 << 20, scale: 0.02, drain: 2 * time.Minute}
	for _, o := range opts {
		o(&c)
	}
	if c.phase <= 0 || c.callers < 1 || c.offered <= 0 || c.hooksPer < 1 || c.fresh < 1 || c.floods < 0 || c.bodies < 0 || c.thread < 0 || c.floods+c.bodies+c.thread == 0 ||
		c.maxUpload < 2 || c.scale <= 0 || herald == nil {
		return HostileResult{}, errors.New("hostile bench: every setting must be above zero, but for the attack's kinds, one of which must be")
	}
	start := time.Now()
	res := HostileResult{PhaseSeconds: c.phase.Seconds(), TimeScale: c.scale, Services: 2, Callers: c.callers, WebhooksPerService: c.hooksPer,
		OfferedPerS: c.offered, FreshWebhooks: c.fresh, MaxBodies: c.bodies, MaxUpload: c.maxUpload, SeriesAllowance: SeriesAllowance}
	if err := emptyTables(ctx, dbURL); err != nil {
		return res, err
	}
	w, hw, err := hostileWorld(c)
	if err != nil {
		return res, err
	}
	defer w.close()
	keys := []string{}
	for _, s := range append(hw.honest, hw.attacker) {
		keys = append(keys, s.name+"="+s.key)
	}
	h, err := startChild(ctx, herald, map[string]string{"DISCORD_TOKEN": w.token, "DATABASE_URL": dbURL,
		"HERALD_DISCORD_API": w.url + "/api/v10", "HERALD_PROXY_ALLOW": "*", "HERALD_PROXY_KEYS": strings.Join(keys, ","),
		"HERALD_PROXY_MAX_BODY": strconv.FormatInt(c.maxUpload, 10), "LOG_LEVEL": "warn", "HERALD_SHUTDOWN_TIMEOUT": "2s"}, proxyAddr)
	if err != nil {
		return res, err
	}
	defer h.stop()
	if err := runHostile(ctx, c, w, hw, h, &res); err != nil {
		return res, err
	}
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

// hostileHooks are the webhooks of a run: the honest services', the
// attacker's own, and fresh ones nobody uses but the attacker, with bad
// tokens.
type hostileHooks struct {
	honest   []service
	attacker service
	fresh    []hook
}

// webhooksPerChannel stays below Discord's 15 per channel.
const webhooksPerChannel = 10

func hostileWorld(c hostileConfig) (*world, hostileHooks, error) {
	w, err := newWorld(c.scale, []sim.LimitChange{{Route: "POST /channels/{channel_id}/webhooks", Limit: 1000, WindowMS: 1000}, {Global: 100_000}})
	if err != nil {
		return nil, hostileHooks{}, err
	}
	var hw hostileHooks
	f := sim.Fixture{Name: "hostile"}
	channel := func(name string) { f.Channels = append(f.Channels, sim.FixtureChannel{Name: name, Type: 0}) }
	for s := range 2 {
		for i := range c.hooksPer {
			channel("svc" + itoa(s) + "-" + itoa(i))
		}
	}
	const own = 4
	for i := range own {
		channel("own-" + itoa(i))
	}
	for i := range (c.fresh + webhooksPerChannel - 1) / webhooksPerChannel {
		channel("fresh-" + itoa(i))
	}
	g, err := w.sim.LoadFixture(f)
	if err != nil {
		w.close()
		return nil, hw, err
	}
	create := func(channel string) (hook, error) {
		var h struct{ ID, Token string }
		err := w.call("POST", "/channels/"+g.Channel(channel)+"/webhooks", map[string]string{"name": channel}, &h)
		return hook{id: h.ID, token: h.Token, channel: g.Channel(channel)}, err
	}
	var errs []error
	for s, name := range []string{"alpha", "beta"} {
		svc := service{name: name, key: newKey()}
		for i := range c.hooksPer {
			h, err := create("svc" + itoa(s) + "-" + itoa(i))
			errs, svc.hooks = append(errs, err), append(svc.hooks, h)
		}
		hw.honest = append(hw.honest, svc)
	}
	hw.attacker = service{name: "attacker", key: newKey()}
	for i := range own {
		h, err := create("own-" + itoa(i))
		errs, hw.attacker.hooks = append(errs, err), append(hw.attacker.hooks, h)
	}
	for i := range c.fresh {
		h, err := create("fresh-" + itoa(i/webhooksPerChannel))
		errs, hw.fresh = append(errs, err), append(hw.fresh, h)
	}
	if err := errors.Join(errs...); err != nil {
		w.close()
		return nil, hw, err
	}
	return w, hw, nil
}

func newKey() string { return "key-" + rand.Text() }

// runHostile runs the quiet phase, waits for its deliveries, runs the
// hostile one and waits for every honest delivery.
func runHostile(ctx context.Context, c hostileConfig, w *world, hw hostileHooks, h *child, res *HostileResult) error {
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2 * c.callers}, Timeout: time.Minute}
	interval := time.Duration(float64(time.Second) * float64(2*c.callers) / c.offered)
	sleep := func(d time.Duration) error {
		select {
		case <-time.After(d):
			return h.alive()
		case <-ctx.Done():
			return ctx.Err()
		}
	}

	rss := sampleRSS(h)
	load := startHonest(hc, h.addrs[proxyAddr], hw.honest, c.callers, interval, "q")
	err := sleep(c.phase)
	quiet := load.stop()
	if res.RSSQuietMB, err = cmpPeak(rss, err); err != nil {
		return err
	}
	if err := awaitDelivery(ctx, w, hw.honest, quiet, c.drain); err != nil {
		return fmt.Errorf("quiet phase: %w", err)
	}

	before, err := h.scrape()
	if err != nil {
		return err
	}
	res.SeriesBefore, res.SeriesPeak = before.series, before.series
	hostileStart := time.Now()
	var known []hook
	for _, s := range hw.honest {
		known = append(known, s.hooks...)
	}
	rss = sampleRSS(h)
	atk := startAttack(h.addrs[proxyAddr], attackPlan{key: hw.attacker.key, known: known, fresh: hw.fresh, own: hw.attacker.hooks,
		floods: c.floods, bodies: c.bodies, thread: c.thread, maxUpload: c.maxUpload})
	load = startHonest(hc, h.addrs[proxyAddr], hw.honest, c.callers, interval, "h")
	for end := time.Now().Add(c.phase); err == nil && time.Now().Before(end); {
		err = sleep(min(time.Second, time.Until(end)))
		if s, serr := h.scrape(); serr == nil {
			res.SeriesPeak = max(res.SeriesPeak, s.series)
		}
	}
	hostile := load.stop()
	atk.stop()
	if res.RSSHostileMB, err = cmpPeak(rss, err); err != nil {
		return err
	}
	if _, res.HWMMB, err = h.memory(); err != nil {
		return err
	}
	// The kernel updates VmHWM lazily: a sample may be above it.
	res.HWMMB = max(res.HWMMB, res.RSSQuietMB, res.RSSHostileMB)
	res.BadTokens, res.MaxBodyPosts, res.RandomThreads = atk.badTokens, atk.maxBodies, atk.threads
	if s, err := h.scrape(); err == nil {
		res.SeriesPeak = max(res.SeriesPeak, s.series)
	}
	drainErr := awaitDelivery(ctx, w, hw.honest, append(quiet, hostile...), c.drain)
	after, err := h.scrape()
	if err != nil {
		return err
	}
	res.SeriesAfter = after.series
	res.SeriesPeak = max(res.SeriesPeak, after.series)
	res.SeriesBounded = res.SeriesPeak-res.SeriesBefore <= SeriesAllowance
	res.HeraldInvalid = map[string]int{}
	for budget, n := range after.invalid {
		res.HeraldInvalid[budget] = n - before.invalid[budget]
	}
	res.SimInvalid, res.SimInvalidBot = simInvalid(w, hostileStart)

	seen := delivered(w, hw.honest)
	res.Quiet = honestFigures(quiet, seen, c.phase, res)
	res.Hostile = honestFigures(hostile, seen, c.phase, res)
	res.AcceptRatio = ratio(res.Hostile.AcceptedPerS, res.Quiet.AcceptedPerS)
	res.AcceptP99Ratio = ratio(res.Hostile.AcceptP99MS, res.Quiet.AcceptP99MS)
	res.DeliveryP99Ratio = ratio(res.Hostile.DeliveryP99MS, res.Quiet.DeliveryP99MS)
	if drainErr != nil && res.Lost == 0 {
		return drainErr
	}
	return nil
}

func cmpPeak(p *rssPeak, err error) (float64, error) {
	peak, perr := p.stop()
	if err != nil {
		return peak, err
	}
	return peak, perr
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// simInvalid counts the simulator's invalid answers from since on, in
// all and to calls on the bot's own token.
func simInvalid(w *world, since time.Time) (all, bot int) {
	for _, r := range w.sim.Requests() {
		if r.Time.Before(since) {
			continue
		}
		if r.Status == http.StatusUnauthorized || r.Status == http.StatusForbidden ||
			(r.Status == http.StatusTooManyRequests && r.Scope != sim.ScopeShared) {
			all++
			if !strings.Contains(r.Route, "_token}") {
				bot++
			}
		}
	}
	return all, bot
}
