package webhookproxy_test

import (
	"encoding/hex"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/heraldtest"
	"github.com/herald-bot/herald/internal/testsupport/wait"
)

// A flood of distinct bad webhook tokens through the proxy, on a webhook
// that delivered and on fresh ones never used, during a burst of
// role-menu clicks and honest notifications, beside the same burst
// without it: every click is answered, every honest notification
// accepted and delivered once, and the bot's own invalid-request budget
// stays at 0 however many of the attacker's tokens reach Discord.
func TestBadTokenFloodDuringInteractions(t *testing.T) {
	t.Parallel()
	const members, honest, fresh = 20, 10, 30
	f := sim.DefaultFixture()
	for i := range 2 * members {
		f.Members = append(f.Members, sim.FixtureMember{Username: "m" + strconv.Itoa(i)})
	}
	for i := range fresh / 10 {
		f.Channels = append(f.Channels, sim.FixtureChannel{Name: "hooks-" + strconv.Itoa(i)})
	}
	p := start(t, map[string]string{"HERALD_PROXY_KEYS": "honest=" + honestKey + ",attacker=" + attackerKey}, heraldtest.WithFixture(f))
	// Setup only: creating the webhooks would wait on their bucket.
	if err := p.Sim.Server.SetLimits(sim.LimitChange{Route: "POST /channels/{channel_id}/webhooks", Limit: 1000, WindowMS: 1000}); err != nil {
		t.Fatal(err)
	}
	var freshIDs []string
	for i := range fresh {
		id, _ := p.webhook(t, p.Channel("hooks-"+strconv.Itoa(i/10)))
		freshIDs = append(freshIDs, id)
	}
	owner := p.As("owner")
	owner.Command("general", "/rolemenu/create", heraldtest.Opts{"name": "news"}).Reply()
	owner.Command("general", "/rolemenu/option/add", heraldtest.Opts{"menu": "news", "role": p.Role("News")}).Reply()
	owner.Command("general", "/rolemenu/publish", heraldtest.Opts{"menu": "news", "channel": p.Channel("roles")}).Reply()
	var menu *discordgo.Message
	p.Eventually("the menu in #roles", func() bool {
		for _, m := range p.Messages(p.Channel("roles")) {
			if strings.HasPrefix(m.Content, "**news**") && len(m.Components) > 0 {
				menu = m
				return true
			}
		}
		return false
	})
	button := menu.Components[0].(*discordgo.ActionsRow).Components[0].(*discordgo.Button).CustomID
	// The honest webhook delivered once: its token is known.
	if a := p.notify(t, "?wait=true", "warm-up"); a != http.StatusOK {
		t.Fatalf("warm-up: %d", a)
	}

	// burst clicks the menu as members from first on, each for the first
	// time (the same calls to Discord in both runs), and posts the honest
	// notifications; it returns the clicks' ack latencies, sorted.
	burst := func(run string, first int) []float64 {
		var clicks []heraldtest.Sent
		for i := range members {
			clicks = append(clicks, p.As("m"+strconv.Itoa(first+i)).Click(menu, button))
		}
		for i := range honest {
			if status := p.notify(t, "", fmt.Sprintf("honest %s %d", run, i)); status != http.StatusNoContent {
				t.Errorf("honest notification %s %d: %d, want 204", run, i, status)
			}
		}
		var acks []float64
		for _, c := range clicks {
			if st := c.Ack(); st.AckLatencyMS != nil {
				acks = append(acks, *st.AckLatencyMS)
			}
		}
		slices.Sort(acks)
		return acks
	}
	// delivered waits until run's honest notifications are in #general
	// (slow is not lost: the wait is long) and returns how long after
	// since.
	delivered := func(run string, since time.Time) time.Duration {
		wait.Within(t, drainTimeout, "the "+run+" run's honest notifications delivered", func() bool {
			n := 0
			for _, m := range p.byWebhook(p.Channel("general"), p.hook) {
				if strings.HasPrefix(m.Content, "honest "+run+" ") {
					n++
				}
			}
			return n >= honest
		})
		return time.Since(since)
	}
	t0 := time.Now()
	quiet := burst("quiet", 0)
	quietDelivered := delivered("quiet", t0)
	const botBudget, webhookBudget = `herald_discord_invalid_requests{budget="bot"}`, `herald_discord_invalid_requests{budget="webhooks"}`
	botBefore, webhooksBefore := p.metric(botBudget), p.metric(webhookBudget)

	fl := p.flood(t, append([]string{p.hook}, freshIDs...))
	p.Eventually("the flood under way", func() bool { return fl.sent.Load() >= 100 })
	t0 = time.Now()
	flooded := burst("flood", members)
	floodDelivered := delivered("flood", t0)
	fl.stop()

	// Every honest notification once, none lost.
	seen := map[string]int{}
	for _, m := range p.byWebhook(p.Channel("general"), p.hook) {
		seen[m.Content]++
	}
	for _, run := range []string{"quiet", "flood"} {
		for i := range honest {
			if c := fmt.Sprintf("honest %s %d", run, i); seen[c] != 1 {
				t.Errorf("%q delivered %d times, want once", c, seen[c])
			}
		}
	}
	// The tokens the proxy took reach Discord (or are checked there)
	// before the budget is read.
	p.Eventually("every fresh webhook the proxy accepted a token for to reach Discord", func() bool {
		asked := map[string]bool{}
		for _, r := range p.Sim.Server.Requests() {
			if id, ok := strings.CutPrefix(r.Path, "/webhooks/"); ok {
				asked[strings.SplitN(id, "/", 2)[0]] = true
			}
		}
		for id := range fl.acceptedOn() {
			if !asked[id] {
				return false
			}
		}
		return true
	})
	bot, webhooks := p.metric(botBudget), p.metric(webhookBudget)
	atDiscord := map[string]int{}
	for _, r := range p.Sim.Server.Requests() {
		if r.Status >= 400 {
			atDiscord[fmt.Sprintf("%s %s %d", r.Method, r.Route, r.Status)]++
		}
	}
	t.Logf("refusals Discord gave: %v", atDiscord)
	t.Logf("flood: %d bad tokens on %d webhooks, answered %v; herald's invalid requests: bot %v, webhooks %v before it, bot %v, webhooks %v after",
		fl.sent.Load(), 1+fresh, fl.answers(), botBefore, webhooksBefore, bot, webhooks)
	t.Logf("honest notifications delivered %.1f s after their burst began quiet, %.1f s flood", quietDelivered.Seconds(), floodDelivered.Seconds())
	t.Logf("ack p50 %.1f ms quiet, %.1f ms flood (%.2f×); p99 %.1f ms quiet, %.1f ms flood (%.2f×)",
		pct(quiet, 50), pct(flooded, 50), pct(flooded, 50)/pct(quiet, 50), pct(quiet, 99), pct(flooded, 99), pct(flooded, 99)/pct(quiet, 99))
	if bot != 0 {
		t.Errorf("the bot's invalid-request budget: %v (-1: not reported; %v before the flood), want 0", bot, botBefore)
	}
	if len(quiet) != members || len(flooded) != members {
		t.Errorf("ack latencies: %d quiet, %d flood, want %d each", len(quiet), len(flooded), members)
	}
}

// notify sends content to p's webhook as the honest service and returns
// the answer's status.
func (p *proxied) notify(t *testing.T, query, content string) int {
	t.Helper()
	return p.send(t, http.MethodPost, "/api/webhooks/"+p.hook+"/"+p.token+query, "application/json", []byte(`{"content":"`+content+`"}`),
		map[string]string{"Authorization": "Bearer " + honestKey}).status
}

// flood posts distinct bad tokens on hooks with the attacker's key, from
// four callers, until stopped.
type flood struct {
	sent     atomic.Int64
	mu       sync.Mutex
	byStatus map[int]int
	accepted map[string]bool // webhooks a bad token was accepted on
	done     chan struct{}
	wg       sync.WaitGroup
}

func (p *proxied) flood(t *testing.T, hooks []string) *flood {
	fl := &flood{byStatus: map[int]int{}, accepted: map[string]bool{}, done: make(chan struct{})}
	hc := &http.Client{}
	for range 4 {
		fl.wg.Add(1)
		go func() {
			defer fl.wg.Done()
			for {
				select {
				case <-fl.done:
					return
				default:
				}
				// 68 characters, as Discord's webhook tokens.
				hook, token := hooks[rand.IntN(len(hooks))], make([]byte, 34)
				for i := range token {
					token[i] = byte(rand.Uint32())
				}
				req, _ := http.NewRequest(http.MethodPost, p.base()+"/api/webhooks/"+hook+"/"+hex.EncodeToString(token), strings.NewReader(`{"content":"x"}`))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer "+attackerKey)
				res, err := hc.Do(req)
				if err != nil {
					continue
				}
				res.Body.Close()
				fl.sent.Add(1)
				fl.mu.Lock()
				fl.byStatus[res.StatusCode]++
				if res.StatusCode < 300 {
					fl.accepted[hook] = true
				}
				fl.mu.Unlock()
			}
		}()
	}
	t.Cleanup(fl.stop)
	return fl
}

func (fl *flood) stop() {
	select {
	case <-fl.done:
	default:
		close(fl.done)
	}
	fl.wg.Wait()
}

func (fl *flood) acceptedOn() map[string]bool {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	return maps.Clone(fl.accepted)
}

func (fl *flood) answers() map[int]int {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	return maps.Clone(fl.byStatus)
}

// pct is the p-th percentile of sorted values.
func pct(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[max(int(float64(len(sorted))*p/100+0.5)-1, 0)]
}
