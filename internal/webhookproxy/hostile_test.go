package webhookproxy_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/herald-bot/herald/internal/discord/sim"
)

// The attack suite: each test is one hostile caller beside an honest one,
// and shows the honest traffic still accepted and delivered.

const (
	attackerKey = "attacker-key-0123456789"
	honestKey   = "honest-key-0123456789"
)

// twoCallers is a proxy with an attacker's and an honest service's keys.
func twoCallers(t *testing.T, env map[string]string) *proxied {
	t.Helper()
	all := map[string]string{"HERALD_PROXY_KEYS": "attacker=" + attackerKey + ",honest=" + honestKey}
	for k, v := range env {
		all[k] = v
	}
	return start(t, all)
}

// post sends a small JSON message as the caller with key.
func (p *proxied) post(t *testing.T, key, hook, token, query string) answer {
	t.Helper()
	return p.send(t, http.MethodPost, "/api/webhooks/"+hook+"/"+token+query, "application/json", []byte(`{"content":"x"}`),
		map[string]string{"Authorization": "Bearer " + key})
}

// metric is the value of one series in herald's /metrics, -1 if absent.
func (p *proxied) metric(series string) float64 {
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindStringSubmatch(p.Metrics())
	if m == nil {
		return -1
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	return v
}

// A flood of distinct bad tokens, on webhooks the proxy never saw, costs
// Discord the attacker's budget and no more: each new token is asked
// about once, then the attacker gets 429 at the door. The bot's own
// invalid-request budget is untouched, and an honest caller's new
// webhook is verified and delivered meanwhile.
func TestBadTokenFloodSpendsOnlyTheCallersBudget(t *testing.T) {
	t.Parallel()
	// A budget of 3, inside the 4 new tokens a caller may have asked about
	// at once (verifyRatePerCaller's burst): the budget is what refuses.
	p := twoCallers(t, map[string]string{"HERALD_PROXY_INVALID_PER_KEY": "3"})
	var fresh []string
	for range 3 {
		id, _ := p.webhook(t, p.Channel("general"))
		fresh = append(fresh, id)
	}
	calls := len(p.Sim.Requests())
	statuses := map[int]int{}
	for i := range 30 {
		a := p.post(t, attackerKey, fresh[i%3], fmt.Sprintf("bad-token-%02d", i), "")
		statuses[a.status]++
		if a.status == http.StatusTooManyRequests && a.header.Get("Retry-After") == "" {
			t.Errorf("429 without Retry-After")
		}
	}
	asked := 0
	for _, r := range p.Sim.Requests()[calls:] {
		if r.Status == http.StatusUnauthorized {
			asked++
		}
	}
	t.Logf("30 distinct bad tokens on 3 fresh webhooks: answers %v, 401s at Discord %d", statuses, asked)
	if statuses[http.StatusUnauthorized] != 3 || statuses[http.StatusTooManyRequests] != 27 || asked != 3 {
		t.Errorf("answers %v with %d 401s at Discord, want 3 × 401 (each asked once) then 27 × 429", statuses, asked)
	}
	hook, token := p.webhook(t, p.Channel("general"))
	if a := p.post(t, honestKey, hook, token, "?wait=true"); a.status != http.StatusOK {
		t.Errorf("honest caller's new webhook during the flood: %d %s", a.status, a.body)
	}
	if bot := p.metric(`herald_discord_invalid_requests{budget="bot"}`); bot != 0 {
		t.Errorf("the bot's invalid-request count is %v, want 0", bot)
	}
	if n := p.metric("herald_webhookproxy_invalid_requests"); n != 3 {
		t.Errorf("the proxy's invalid-request count is %v, want 3", n)
	}
	p.nothingStoredBut(t, 1)
}

// nothingStoredBut fails unless exactly n deliveries were stored.
func (p *proxied) nothingStoredBut(t *testing.T, n int) {
	t.Helper()
	if got := p.count(t, `SELECT count(*) FROM webhookproxy_deliveries`); got != n {
		t.Errorf("%d deliveries stored, want %d", got, n)
	}
}

// Large bodies are held within a bounded pool, one caller at most half of
// it: an attacker holding its half gets 503 with Retry-After for more,
// while an honest caller's large body is accepted beside it.
func TestLargeBodiesHeldWithinTheCallersHalf(t *testing.T) {
	t.Parallel()
	// 1 MiB of files, 2 MiB bodies; 8 MiB in flight, 4 MiB per caller;
	// the callers' byte rate (TestCallerRates) left out of the way.
	p := twoCallers(t, map[string]string{"HERALD_PROXY_MAX_BODY": "1048576", "HERALD_PROXY_MEMORY": "8388608",
		"HERALD_PROXY_KEY_BYTES_RATE": "1000000000"})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	const size = 2 << 20
	held := make(chan error, 2)
	var writers []*io.PipeWriter
	for range 2 {
		// Declares 2 MiB and sends one byte: the reservation is held.
		pr, pw := io.Pipe()
		writers = append(writers, pw)
		go pw.Write([]byte("{"))
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, p.base()+"/api/webhooks/"+p.hook+"/"+p.token, pr)
		req.ContentLength = size
		req.Header.Set("Authorization", "Bearer "+attackerKey)
		req.Header.Set("Content-Type", "application/json")
		go func() {
			res, err := http.DefaultClient.Do(req)
			if err == nil {
				res.Body.Close()
			}
			held <- err
		}()
	}
	p.Eventually("the attacker holding 4 MiB", func() bool { return p.metric("herald_webhookproxy_body_bytes") == 4<<20 })

	big := bytes.Repeat([]byte(" "), size*3/4)
	body := append([]byte(`{"content":"large"}`), big...)
	a := p.send(t, http.MethodPost, "/api/webhooks/"+p.hook+"/"+p.token, "application/json", body, map[string]string{"Authorization": "Bearer " + attackerKey})
	if a.status != http.StatusServiceUnavailable || a.header.Get("Retry-After") == "" {
		t.Errorf("attacker's third large body: %d %s, want 503 with Retry-After", a.status, a.body)
	}
	a = p.send(t, http.MethodPost, "/api/webhooks/"+p.hook+"/"+p.token+"?wait=true", "application/json", body, map[string]string{"Authorization": "Bearer " + honestKey})
	if a.status != http.StatusOK {
		t.Errorf("honest large body beside the attacker: %d %s", a.status, a.body)
	}
	cancel()
	for _, pw := range writers {
		pw.CloseWithError(context.Canceled)
	}
	<-held
	<-held
	p.Eventually("the pool empty again", func() bool { return p.metric("herald_webhookproxy_body_bytes") == 0 })
}

// A caller that sends its body slower than the body timeout is cut off
// and its bytes return to the pool; an honest request meanwhile is
// accepted.
func TestSlowBodyCutOff(t *testing.T) {
	t.Parallel()
	// 5 s: the test must see the slow body hold its bytes before the cut.
	p := twoCallers(t, map[string]string{"HERALD_PROXY_BODY_TIMEOUT": "5s"})
	conn, err := net.Dial("tcp", strings.TrimPrefix(p.base(), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /api/webhooks/%s/%s HTTP/1.1\r\nHost: proxy\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"content\":",
		p.hook, p.token, attackerKey)
	p.Eventually("the slow body holding its bytes", func() bool { return p.metric("herald_webhookproxy_body_bytes") == 1000 })
	if a := p.post(t, honestKey, p.hook, p.token, "?wait=true"); a.status != http.StatusOK {
		t.Errorf("honest request beside a slow one: %d %s", a.status, a.body)
	}
	p.Eventually("the slow body cut off", func() bool { return p.metric("herald_webhookproxy_body_bytes") == 0 })
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	got, _ := io.ReadAll(conn)
	if strings.Contains(string(got), " 204 ") {
		t.Errorf("the slow request was accepted: %q", got)
	}
	p.nothingStoredBut(t, 1)
}

// Random thread ids from one caller open a bounded number of queues, and
// its pending deliveries stop at its own quota; another caller's posts
// are accepted, and /metrics gains no series for either.
func TestRandomThreadsAndDepthBoundedPerCaller(t *testing.T) {
	t.Parallel()
	p := twoCallers(t, map[string]string{"HERALD_PROXY_MAX_THREADS": "3", "HERALD_PROXY_MAX_KEY_DEPTH": "5"})
	honestHook, honestToken := p.webhook(t, p.Channel("general"))
	// One delivery per webhook, then Discord's window holds the rest
	// pending for ten minutes.
	p.Sim.SetLimits(sim.LimitChange{Route: executeRoute, Limit: 1, WindowMS: (10 * time.Minute).Milliseconds()})
	for _, w := range [][3]string{{attackerKey, p.hook, p.token}, {honestKey, honestHook, honestToken}} {
		if a := p.post(t, w[0], w[1], w[2], "?wait=true"); a.status != http.StatusOK {
			t.Fatalf("first delivery: %d %s", a.status, a.body)
		}
	}
	series := strings.Count(p.Metrics(), "\nherald_webhookproxy")

	threads := map[int]int{}
	for i := range 20 {
		a := p.post(t, attackerKey, p.hook, p.token, "?thread_id="+strconv.Itoa(1200000000000000000+i))
		threads[a.status]++
	}
	rest := map[int]int{}
	for range 5 {
		rest[p.post(t, attackerKey, p.hook, p.token, "").status]++
	}
	honest := map[int]int{}
	for range 5 {
		honest[p.post(t, honestKey, honestHook, honestToken, "").status]++
	}
	t.Logf("attacker: 20 random threads %v, 5 more %v; honest: 5 posts %v", threads, rest, honest)
	if threads[http.StatusNoContent] != 3 || threads[http.StatusTooManyRequests] != 17 {
		t.Errorf("random threads: %v, want 3 accepted (the bound) and 17 × 429", threads)
	}
	if rest[http.StatusNoContent] != 2 || rest[http.StatusTooManyRequests] != 3 {
		t.Errorf("attacker's posts past its threads: %v, want 2 accepted (5 pending in all) and 3 × 429", rest)
	}
	if honest[http.StatusNoContent] != 5 {
		t.Errorf("honest caller's posts: %v, want all 5 accepted", honest)
	}
	m := p.Metrics()
	if n := strings.Count(m, "\nherald_webhookproxy"); n > series+2 || strings.Contains(m, "1200000000000000") || strings.Contains(m, p.hook) {
		t.Errorf("/metrics went from %d to %d proxy series, or names a thread or webhook:\n%s", series, n, grep(m, "herald_webhookproxy_queued"))
	}
	if n := p.count(t, `SELECT coalesce(sum(rows), 0)::int FROM webhookproxy_usage WHERE scope = 'key:attacker'`); n != 5 {
		t.Errorf("attacker's pending deliveries counted %d, want 5", n)
	}
}

// An encoded slash in a token is a path Discord has no route for: 404,
// nothing stored, nothing sent, and the text reaches no metric or log.
func TestEncodedSlashIsNoRoute(t *testing.T) {
	t.Parallel()
	p := twoCallers(t, nil)
	calls := len(p.Sim.Requests())
	for _, path := range []string{
		"/api/webhooks/" + p.hook + "/abc%2FINJECTED_label",
		"/api/webhooks/" + p.hook + "%2FINJECTED_label/" + p.token,
		"/api/webhooks/" + p.hook + "/" + p.token + "/INJECTED_label",
	} {
		a := p.send(t, http.MethodPost, path, "application/json", []byte(`{"content":"x"}`), map[string]string{"Authorization": "Bearer " + honestKey})
		if a.status != http.StatusNotFound || a.discordError(t).Code != 0 {
			t.Errorf("%s: %d %s, want Discord's 404 with code 0", path, a.status, a.body)
		}
	}
	if len(p.Sim.Requests()) != calls {
		t.Errorf("Discord was called for a path with an encoded slash")
	}
	p.nothingStored(t)
	if strings.Contains(p.Metrics(), "INJECTED") || strings.Contains(p.Logs(), "INJECTED") {
		t.Errorf("request path text reached the metrics or the log")
	}
	if a := p.post(t, honestKey, p.hook, p.token, "?wait=true"); a.status != http.StatusOK {
		t.Errorf("honest request after: %d %s", a.status, a.body)
	}
}
