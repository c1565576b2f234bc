package bench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math"
	"net/http"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/herald-bot/herald/internal/app"
	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/webhookproxy"
)

// ProxyResult is what `herald bench proxy --json` prints: herald's
// webhook proxy in three phases, each on its own simulator and an emptied
// database, in one run.
type ProxyResult struct {
	// Acceptance: Clients callers post small JSON bodies to Webhooks
	// webhooks, each waiting for its answer; a 204 means the body and its
	// delivery job were committed (Postgres fsync as configured) before
	// the answer. First each webhook's token is verified by one post
	// (VerifySeconds: the proxy asks Discord about a new token at most 2
	// a second per caller, a policy against callers flooding it with
	// made-up tokens, so 64 new webhooks take half a minute); then the
	// first WarmupSeconds (connections opened, herald's pools filled) are
	// not counted; the rate and latencies are of the AcceptSeconds after.
	// Deliveries run beside, at Discord's own (unscaled) limits.
	AcceptedPerS  float64 `json:"accepted_per_s"`
	AcceptP50MS   float64 `json:"accept_p50_ms"`
	AcceptP99MS   float64 `json:"accept_p99_ms"`
	Accepted      int     `json:"accepted"`
	AcceptSeconds float64 `json:"accept_seconds"`
	WarmupSeconds float64 `json:"warmup_seconds"`
	VerifySeconds float64 `json:"verify_seconds"`
	Clients       int     `json:"clients"`
	Webhooks      int     `json:"webhooks"`
	// BareBatchPerS is the baseline, in the same run: bare River's batch
	// insert (InsertMany of 200 jobs carrying the same body, one COMMIT
	// each) from one writer for AcceptSeconds, with no HTTP, no checks and
	// no callers waiting: what Postgres commits at most through River.
	// AcceptedToBare is AcceptedPerS over it.
	BareBatchPerS  float64 `json:"bare_batch_per_s"`
	AcceptedToBare float64 `json:"accepted_to_bare"`
	// Refused counts answers other than 204 (429 queue full, 503, ...)
	// and failed requests, by status ("error" for no answer).
	Refused map[string]int `json:"refused,omitempty"`

	// Memory: callers keep posting at Discord's unscaled limits, so
	// deliveries trickle out, until Queued deliveries are pending in
	// Postgres; then the process's resident set is read. Herald runs in
	// this process, so the figure includes the simulator, its request log
	// and the HTTP callers too: it is an upper bound on herald's own.
	RSSMB100kQueued float64 `json:"rss_mb_100k_queued"`
	// RSSMBAfterGC is the same after a forced collection that returns
	// freed memory to the OS: the live part.
	RSSMBAfterGC float64 `json:"rss_mb_after_gc"`
	Queued       int     `json:"queued"`
	QueueSeconds float64 `json:"queue_seconds"`
	// QueueAcceptedPerS is the acceptance rate of the memory phase, whose
	// queue grows to Queued.
	QueueAcceptedPerS float64 `json:"queue_accepted_per_s"`

	// Delivery: senders post Notifications notifications to one webhook
	// as fast as it accepts them, each sender numbering its own; the
	// simulator runs at TimeScale. LimitPerS is the binding limit of that
	// webhook on the scaled clock: the tighter of the per-webhook bucket
	// (5 per 2 s) and the channel's shared webhook scope (30 a minute),
	// see sim routes.go. DeliverySeconds runs from the first post to the
	// simulator's last successful execute; DeliveredPerS is the delivered
	// notifications over it. MinimumSeconds is the least time the limits'
	// windows allow for them, the first window's burst included, and
	// DeliveryRatioToLimit is MinimumSeconds over DeliverySeconds: the
	// share of the rate the limit allows that herald reached (1 at best;
	// DeliveredPerS over LimitPerS would credit the free first burst).
	DeliveryRatioToLimit float64 `json:"delivery_ratio_to_limit"`
	DeliveredPerS        float64 `json:"delivered_per_s"`
	LimitPerS            float64 `json:"limit_per_s"`
	MinimumSeconds       float64 `json:"minimum_seconds"`
	DeliverySeconds      float64 `json:"delivery_seconds"`
	TimeScale            float64 `json:"time_scale"`
	Notifications        int     `json:"notifications"`
	Delivered            int     `json:"delivered"`
	// RateLimited counts the simulator's 429s to the delivery phase's
	// executes, by scope.
	RateLimited map[string]int `json:"rate_limited,omitempty"`
	// OutOfOrder counts notifications the channel shows before an earlier
	// one of the same sender.
	OutOfOrder int `json:"out_of_order"`

	// Lost counts requests answered 204 that were never delivered (the
	// delivery phase) or never stored (acceptance and memory phases: fewer
	// delivery rows than 204s). Duplicates counts extra copies in the
	// channel.
	Lost       int `json:"lost"`
	Duplicates int `json:"duplicates"`
	// Seconds is the whole run's wall-clock time.
	Seconds float64 `json:"seconds"`

	// Hostile is `herald bench proxy --hostile`'s result, which runs
	// instead of the three phases above.
	Hostile *HostileResult `json:"hostile,omitempty"`
}

// ProxyOption changes one setting of RunProxy.
type ProxyOption func(*proxyConfig)

type proxyConfig struct {
	acceptFor     time.Duration
	warmup        time.Duration
	clients       int
	webhooks      int
	queued        int
	notifications int
	senders       int
	scale         float64
	queueTimeout  time.Duration
}

// ProxyAcceptFor sets how long the acceptance phase posts (default 10s).
func ProxyAcceptFor(d time.Duration) ProxyOption { return func(c *proxyConfig) { c.acceptFor = d } }

// ProxyWarmup sets how long the acceptance phase posts before it counts
// (default 2s).
func ProxyWarmup(d time.Duration) ProxyOption { return func(c *proxyConfig) { c.warmup = d } }

// ProxyClients sets the concurrent callers of the acceptance and memory
// phases (default 64).
func ProxyClients(n int) ProxyOption { return func(c *proxyConfig) { c.clients = n } }

// ProxyWebhooks sets the webhooks they post to, 4 per channel (default 64).
func ProxyWebhooks(n int) ProxyOption { return func(c *proxyConfig) { c.webhooks = n } }

// ProxyQueued sets the pending deliveries the memory phase reaches
// (default 100,000).
func ProxyQueued(n int) ProxyOption { return func(c *proxyConfig) { c.queued = n } }

// ProxyNotifications sets the notifications of the delivery phase
// (default 600) and its concurrent senders (default 8).
func ProxyNotifications(n, senders int) ProxyOption {
	return func(c *proxyConfig) { c.notifications, c.senders = n, senders }
}

// ProxyTimeScale sets the delivery phase's simulator time scale (default
// 0.02: the channel's 30-a-minute webhook scope allows 25 a second).
func ProxyTimeScale(s float64) ProxyOption { return func(c *proxyConfig) { c.scale = s } }

// The simulator's webhook-execute limits (sim routes.go), unscaled: the
// per-webhook bucket and the shared scope of the webhook's channel.
var webhookLimits = []sim.Limit{{Requests: 5, Window: 2 * time.Second}, {Requests: 30, Window: time.Minute}}

const executeRoute = "/webhooks/{webhook_id}/{webhook_token}"

// RunProxy measures herald's webhook proxy: durable acceptance rate and
// latency, resident memory with a deep queue, and delivery rate to one
// webhook against the simulator's limit with every notification checked
// for loss, duplication and order. dbURL is a migrated database herald
// may fill; it is emptied before each phase.
func RunProxy(ctx context.Context, dbURL string, opts ...ProxyOption) (ProxyResult, error) {
	c := proxyConfig{acceptFor: 10 * time.Second, warmup: 2 * time.Second, clients: 64, webhooks: 64, queued: 100_000, notifications: 600, senders: 8,
		scale: 0.02, queueTimeout: 90 * time.Second}
	for _, o := range opts {
		o(&c)
	}
	if c.clients < 1 || c.webhooks < 1 || c.queued < 1 || c.notifications < 1 || c.senders < 1 || c.scale <= 0 || c.acceptFor <= 0 || c.warmup < 0 {
		return ProxyResult{}, errors.New("proxy bench: every setting but the warm-up must be above zero, the warm-up not below")
	}
	start := time.Now()
	res := ProxyResult{Clients: c.clients, Webhooks: c.webhooks, TimeScale: c.scale, Notifications: c.notifications}
	if err := proxyAccept(ctx, dbURL, c, &res); err != nil {
		return res, fmt.Errorf("acceptance: %w", err)
	}
	if err := proxyMemory(ctx, dbURL, c, &res); err != nil {
		return res, fmt.Errorf("memory: %w", err)
	}
	if err := proxyDeliver(ctx, dbURL, c, &res); err != nil {
		return res, fmt.Errorf("delivery: %w", err)
	}
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

// hook is a webhook created in the simulator, with its proxy URL.
type hook struct{ id, token, channel, url string }

// proxyWorld is a simulator at scale with webhooks created as the bot, 4
// per channel, and herald with its proxy on, relaying them.
func proxyWorld(ctx context.Context, dbURL string, scale float64, webhooks int) (w *world, hooks []hook, stop func(), err error) {
	// Setup calls only: creating many webhooks at once would wait on the
	// create bucket and the global limit, neither of which is measured.
	w, err = newWorld(scale, []sim.LimitChange{{Route: "POST /channels/{channel_id}/webhooks", Limit: 1000, WindowMS: 1000}, {Global: 100_000}})
	if err != nil {
		return nil, nil, nil, err
	}
	const perChannel = 4
	f := sim.Fixture{Name: "proxy"}
	for i := range (webhooks + perChannel - 1) / perChannel {
		f.Channels = append(f.Channels, sim.FixtureChannel{Name: "alerts-" + itoa(i), Type: 0})
	}
	g, err := w.sim.LoadFixture(f)
	if err != nil {
		w.close()
		return nil, nil, nil, err
	}
	for i := range webhooks {
		ch := g.Channels[i/perChannel].ID
		var h struct{ ID, Token string }
		if err := w.call("POST", "/channels/"+ch+"/webhooks", map[string]string{"name": "bench-" + itoa(i)}, &h); err != nil {
			w.close()
			return nil, nil, nil, err
		}
		hooks = append(hooks, hook{id: h.ID, token: h.Token, channel: ch})
	}
	ids := make([]string, len(hooks))
	for i, h := range hooks {
		ids[i] = h.id
	}
	addr, stop, err := startProxy(ctx, w, dbURL, map[string]string{"HERALD_PROXY_ALLOW": strings.Join(ids, ","),
		"HERALD_PROXY_MAX_DEPTH": "1000000", "HERALD_PROXY_MAX_KEY_DEPTH": "1000000", "HERALD_PROXY_MAX_TOTAL": "1000000"})
	if err != nil {
		w.close()
		return nil, nil, nil, err
	}
	for i := range hooks {
		hooks[i].url = "http://" + addr + "/api/webhooks/" + hooks[i].id + "/" + hooks[i].token
	}
	return w, hooks, stop, nil
}

// startProxy is startHerald with the proxy on (HERALD_PROXY_ADDR
// 127.0.0.1:0) and env added; it returns the proxy's address. Its
// callers are keyless, one caller to the proxy, whose rate limit (a
// policy between callers, measured by the hostile phase) is lifted so
// the capacity of herald itself is what is measured.
func startProxy(ctx context.Context, w *world, dbURL string, env map[string]string) (addr string, stop func(), err error) {
	if err := emptyTables(ctx, dbURL); err != nil {
		return "", nil, err
	}
	all := w.heraldEnv(dbURL)
	maps.Copy(all, map[string]string{"HERALD_PROXY_ADDR": "127.0.0.1:0", "HERALD_PROXY_KEY_RATE": "1000000", "HERALD_PROXY_KEY_BYTES_RATE": "1000000000000"})
	for k, v := range env {
		all[k] = v
	}
	cfg, err := app.LoadConfig(func(k string) (string, bool) { v, ok := all[k]; return v, ok })
	if err != nil {
		return "", nil, err
	}
	a, err := app.New(ctx, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		return "", nil, err
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- a.Run(runCtx) }()
	stop = sync.OnceFunc(func() { cancel(); <-done })
	if err := waitReady(a.AdminAddr()); err != nil {
		stop()
		return "", nil, err
	}
	if addr = a.ServiceAddr(webhookproxy.Name); addr == "" {
		stop()
		return "", nil, errors.New("the webhook proxy is not serving")
	}
	return addr, stop, nil
}

// posters are concurrent callers posting small JSON bodies round-robin
// over hooks until stopped, each waiting for its answer.
type posters struct {
	accepted atomic.Int64
	mu       sync.Mutex
	lat      []float64 // ms of the 204s to requests sent from on
	from     time.Time
	refused  map[string]int
	stopping chan struct{}
	wg       sync.WaitGroup
}

func startPosters(hooks []hook, clients int, from time.Time) *posters {
	p := &posters{refused: map[string]int{}, stopping: make(chan struct{}), from: from}
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients, MaxIdleConns: clients}, Timeout: 30 * time.Second}
	for c := range clients {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			var lat []float64
			refused := map[string]int{}
			defer func() {
				p.mu.Lock()
				p.lat = append(p.lat, lat...)
				for k, v := range refused {
					p.refused[k] += v
				}
				p.mu.Unlock()
			}()
			for i := 0; ; i++ {
				select {
				case <-p.stopping:
					return
				default:
				}
				h := hooks[(c+i)%len(hooks)]
				body := posterBody(c, i)
				t0 := time.Now()
				res, err := hc.Post(h.url, "application/json", strings.NewReader(body))
				if err != nil {
					if t0.After(p.from) {
						refused["error"]++
					}
					continue
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != http.StatusNoContent {
					if t0.After(p.from) {
						refused[strconv.Itoa(res.StatusCode)]++
					}
					if res.StatusCode == http.StatusTooManyRequests || res.StatusCode == http.StatusServiceUnavailable {
						time.Sleep(100 * time.Millisecond)
					}
					continue
				}
				if t0.After(p.from) {
					lat = append(lat, ms(time.Since(t0)))
				}
				p.accepted.Add(1)
			}
		}()
	}
	return p
}

// posterBody is caller c's i-th notification.
func posterBody(c, i int) string {
	return `{"content":"bench ` + itoa(c) + `-` + itoa(i) + `","embeds":[{"title":"alert","description":"disk full"}]}`
}

func (p *posters) stop() {
	close(p.stopping)
	p.wg.Wait()
}

func proxyAccept(ctx context.Context, dbURL string, c proxyConfig, res *ProxyResult) error {
	w, hooks, stop, err := proxyWorld(ctx, dbURL, 1, c.webhooks)
	if err != nil {
		return err
	}
	defer w.close()
	defer stop()
	t0 := time.Now()
	if err := verifyHooks(ctx, hooks); err != nil {
		return err
	}
	res.VerifySeconds = time.Since(t0).Seconds()
	from := time.Now().Add(c.warmup)
	p := startPosters(hooks, c.clients, from)
	select {
	case <-time.After(time.Until(from)):
	case <-ctx.Done():
	}
	// Answers to requests sent in the warm-up still count here, as they
	// do not in the latencies: a handful, at most one per caller.
	warm := p.accepted.Load()
	select {
	case <-time.After(c.acceptFor):
	case <-ctx.Done():
	}
	n := p.accepted.Load() - warm
	elapsed := time.Since(from)
	p.stop()
	if err := ctx.Err(); err != nil {
		return err
	}
	res.Accepted = int(n)
	res.AcceptSeconds = elapsed.Seconds()
	res.WarmupSeconds = c.warmup.Seconds()
	res.AcceptedPerS = float64(n) / elapsed.Seconds()
	slices.Sort(p.lat)
	res.AcceptP50MS, res.AcceptP99MS = rank(p.lat, 50, len(p.lat), 0), rank(p.lat, 99, len(p.lat), 0)
	if len(p.refused) > 0 {
		res.Refused = p.refused
	}
	stored, err := countRows(ctx, dbURL, `SELECT count(*) FROM webhookproxy_deliveries`)
	if err != nil {
		return err
	}
	// Each webhook's verifying post was stored too.
	res.Lost += max(len(hooks)+int(p.accepted.Load())-stored, 0)
	stop()
	if res.BareBatchPerS, err = bareBatchInserts(ctx, dbURL, posterBody(0, 0), 1, c.acceptFor); err != nil {
		return fmt.Errorf("bare River: %w", err)
	}
	res.AcceptedToBare = res.AcceptedPerS / res.BareBatchPerS
	return nil
}

// verifyHooks posts to each hook until it is accepted once (one stored
// delivery each), so its token is verified.
func verifyHooks(ctx context.Context, hooks []hook) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	errs := make([]error, len(hooks))
	var wg sync.WaitGroup
	for i, h := range hooks {
		wg.Go(func() {
			for {
				req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.url, strings.NewReader(`{"content":"verify"}`))
				if err != nil {
					errs[i] = err
					return
				}
				req.Header.Set("Content-Type", "application/json")
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					errs[i] = err
					return
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				switch res.StatusCode {
				case http.StatusNoContent:
					return
				case http.StatusTooManyRequests, http.StatusServiceUnavailable:
					wait, err := strconv.ParseFloat(res.Header.Get("Retry-After"), 64)
					if err != nil || wait <= 0 {
						wait = 1
					}
					select {
					case <-time.After(time.Duration(wait * float64(time.Second))):
					case <-ctx.Done():
						errs[i] = fmt.Errorf("webhook %s not verified: %w", h.id, ctx.Err())
						return
					}
				default:
					errs[i] = fmt.Errorf("webhook %s: the proxy answered %d to a first post", h.id, res.StatusCode)
					return
				}
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

func proxyMemory(ctx context.Context, dbURL string, c proxyConfig, res *ProxyResult) error {
	// Start from the memory the earlier phase returned, not its garbage.
	debug.FreeOSMemory()
	w, hooks, stop, err := proxyWorld(ctx, dbURL, 1, c.webhooks)
	if err != nil {
		return err
	}
	defer w.close()
	defer stop()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	t0 := time.Now()
	p := startPosters(hooks, c.clients, t0)
	deadline := t0.Add(c.queueTimeout)
	queued := 0
	for queued < c.queued {
		if time.Now().After(deadline) || ctx.Err() != nil {
			p.stop()
			return fmt.Errorf("%d of %d deliveries queued after %s (%v)", queued, c.queued, c.queueTimeout, p.refused)
		}
		// Polled often enough near the target to stop close to it.
		time.Sleep(100 * time.Millisecond)
		if int(p.accepted.Load()) < c.queued {
			continue
		}
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM webhookproxy_deliveries WHERE state = 'pending'`).Scan(&queued); err != nil {
			p.stop()
			return err
		}
	}
	p.stop()
	res.QueueSeconds = time.Since(t0).Seconds()
	res.QueueAcceptedPerS = float64(p.accepted.Load()) / res.QueueSeconds
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM webhookproxy_deliveries WHERE state = 'pending'`).Scan(&res.Queued); err != nil {
		return err
	}
	if res.RSSMB100kQueued, err = rssMB(); err != nil {
		return err
	}
	debug.FreeOSMemory()
	if res.RSSMBAfterGC, err = rssMB(); err != nil {
		return err
	}
	stored, err := countRows(ctx, dbURL, `SELECT count(*) FROM webhookproxy_deliveries`)
	if err != nil {
		return err
	}
	res.Lost += max(int(p.accepted.Load())-stored, 0)
	return nil
}

func proxyDeliver(ctx context.Context, dbURL string, c proxyConfig, res *ProxyResult) error {
	debug.FreeOSMemory()
	w, hooks, stop, err := proxyWorld(ctx, dbURL, c.scale, 1)
	if err != nil {
		return err
	}
	defer w.close()
	defer stop()
	h := hooks[0]
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: c.senders}, Timeout: 30 * time.Second}
	// Each sender numbers its notifications and sends the next only after
	// the previous one's 204, so the proxy accepted them in that order.
	accepted := make([][]bool, c.senders)
	errs := make(chan error, c.senders)
	t0 := time.Now()
	var wg sync.WaitGroup
	for s := range c.senders {
		n := c.notifications / c.senders
		if s < c.notifications%c.senders {
			n++
		}
		accepted[s] = make([]bool, n)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < n; {
				if ctx.Err() != nil {
					errs <- ctx.Err()
					return
				}
				body := `{"content":"n ` + itoa(s) + ` ` + itoa(i) + `"}`
				r, err := hc.Post(h.url, "application/json", strings.NewReader(body))
				if err != nil {
					errs <- err
					return
				}
				b, _ := io.ReadAll(r.Body)
				r.Body.Close()
				switch r.StatusCode {
				case http.StatusNoContent:
					accepted[s][i] = true
					i++
				case http.StatusTooManyRequests, http.StatusServiceUnavailable:
					time.Sleep(100 * time.Millisecond)
				default:
					errs <- fmt.Errorf("notification %d-%d: %d %s", s, i, r.StatusCode, bytes.TrimSpace(b))
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	total := 0
	for _, a := range accepted {
		total += len(a)
	}

	// Three times the least the limits allow, and some.
	wait := 3*leastTime(total, c.scale) + 15*time.Second
	// Whatever has not arrived by then counts as lost below.
	_ = until(wait, "every notification delivered", func() bool { return len(byWebhook(w, h)) >= total })
	// Any late duplicate has a few windows to show.
	time.Sleep(time.Duration(float64(2*time.Second) * c.scale * 3))

	seen := make([]map[int]int, c.senders)
	for s := range seen {
		seen[s] = map[int]int{}
	}
	last := make([]int, c.senders)
	for s := range last {
		last[s] = -1
	}
	for _, content := range byWebhook(w, h) {
		var s, i int
		if _, err := fmt.Sscanf(content, "n %d %d", &s, &i); err != nil || s < 0 || s >= c.senders || i < 0 || i >= len(accepted[s]) {
			return fmt.Errorf("the channel shows a notification no sender sent: %q", content)
		}
		seen[s][i]++
		if seen[s][i] > 1 {
			res.Duplicates++
			continue
		}
		if i < last[s] {
			res.OutOfOrder++
		}
		last[s] = max(last[s], i)
	}
	for s, a := range accepted {
		for i, ok := range a {
			if ok && seen[s][i] == 0 {
				res.Lost++
			}
			if seen[s][i] > 0 {
				res.Delivered++
			}
		}
	}
	// From the first post to the simulator's last successful execute.
	var end time.Time
	res.RateLimited = map[string]int{}
	for _, r := range w.sim.Requests() {
		if r.Time.Before(t0) || r.Method != http.MethodPost || r.Route != executeRoute {
			continue
		}
		switch {
		case r.Status == http.StatusOK && r.Time.After(end):
			end = r.Time
		case r.Status == http.StatusTooManyRequests:
			res.RateLimited[r.Scope]++
		}
	}
	if len(res.RateLimited) == 0 {
		res.RateLimited = nil
	}
	res.LimitPerS = math.Inf(1)
	for _, l := range webhookLimits {
		res.LimitPerS = min(res.LimitPerS, float64(l.Requests)/(l.Window.Seconds()*c.scale))
	}
	res.MinimumSeconds = leastTime(res.Delivered, c.scale).Seconds()
	if !end.IsZero() && res.Delivered > 0 {
		took := end.Sub(t0)
		res.DeliverySeconds = took.Seconds()
		res.DeliveredPerS = float64(res.Delivered) / took.Seconds()
		res.DeliveryRatioToLimit = res.MinimumSeconds / res.DeliverySeconds
	}
	return nil
}

// leastTime is the least time n executes to one webhook can take under
// the simulator's limits at scale.
func leastTime(n int, scale float64) time.Duration {
	var least time.Duration
	for _, l := range webhookLimits {
		least = max(least, minimum(n, l.Requests, time.Duration(float64(l.Window)*scale)))
	}
	return least
}

// byWebhook is the contents of the messages h sent to its channel,
// oldest first.
func byWebhook(w *world, h hook) []string {
	msgs, _ := w.sim.Messages(h.channel)
	var out []string
	for _, m := range msgs {
		if id, _ := m["webhook_id"].(string); id == h.id {
			content, _ := m["content"].(string)
			out = append(out, content)
		}
	}
	return out
}

func countRows(ctx context.Context, dbURL, query string) (int, error) {
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return 0, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var n int
	err = conn.QueryRow(ctx, query).Scan(&n)
	return n, err
}

// rssMB is this process's resident set (VmRSS) in MiB.
func rssMB() (float64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			if err != nil {
				return 0, fmt.Errorf("VmRSS %q: %w", rest, err)
			}
			return float64(kb) / 1024, nil
		}
	}
	return 0, errors.New("no VmRSS in /proc/self/status")
}
