package demo

import (
	"context"
	"math"
	"net/http"
	"slices"
	"strings"

	"github.com/herald-bot/herald/internal/discord/sim"
)

// Summary is what `herald demo` prints at the end, and as one JSON object
// with --json.
type Summary struct {
	// Interactions the scenario made (commands, clicks, panel clicks) and
	// the simulator's ack latency of those herald answered, in
	// wall-clock milliseconds.
	Interactions int     `json:"interactions"`
	Acked        int     `json:"acked"`
	AckP50MS     float64 `json:"ack_p50_ms"`
	AckP95MS     float64 `json:"ack_p95_ms"`
	AckP99MS     float64 `json:"ack_p99_ms"`
	// APICalls are the REST requests herald made to Discord during the
	// scenario; NaiveAPICalls the naive bot's for the same scenario on
	// its own simulator (naive.go), counted by that simulator. ByCategory
	// splits both, with the work each did wrong.
	APICalls      int        `json:"api_calls"`
	NaiveAPICalls int        `json:"naive_api_calls"`
	ByCategory    []Category `json:"by_category"`
	// Naive is the naive bot's side in full, as herald's is here.
	Naive *Summary `json:"naive,omitempty"`
	// RateLimitedByScope counts Discord's 429s by X-RateLimit-Scope
	// ("blocked" for Cloudflare's header-less ones).
	RateLimitedByScope map[string]int `json:"rate_limited_by_scope"`
	// InvalidRequests counts 401, 403 and non-shared 429 answers: the ones
	// Discord blocks a bot's IP for past 10,000 in 10 minutes.
	InvalidRequests int `json:"invalid_requests"`
	ServerErrors    int `json:"server_errors"`
	// Coalesced counts work herald merged: saved menu revisions never
	// published on their own, and clicks whose role changes cancelled out
	// before they were sent.
	Coalesced int `json:"coalesced"`
	// Deduplicated counts panel clicks herald answered that did not open a
	// second ticket for their member.
	Deduplicated int `json:"deduplicated"`
	// Lost counts acknowledged work missing from the simulator's final
	// state; Duplicates work done twice. Both must be 0.
	Lost                   int            `json:"lost"`
	Duplicates             int            `json:"duplicates"`
	LostByKind             map[string]int `json:"lost_by_kind,omitempty"`
	DuplicatesByKind       map[string]int `json:"duplicates_by_kind,omitempty"`
	Problems               []string       `json:"problems,omitempty"`
	Uncertain              int            `json:"uncertain"`
	TicketsOpened          int            `json:"tickets_opened"`
	TicketsClosed          int            `json:"tickets_closed"`
	NotificationsSent      int            `json:"notifications_sent"`
	NotificationsAccepted  int            `json:"notifications_accepted"`
	NotificationsDelivered int            `json:"notifications_delivered"`
	HeraldDownSeconds      float64        `json:"herald_down_seconds"`
	TimeScale              float64        `json:"time_scale"`
	ScenarioSeconds        float64        `json:"scenario_seconds"`
	Drained                bool           `json:"drained"`
	DrainSeconds           float64        `json:"drain_seconds"`
	RequestsByRouteTop5    []RouteCount   `json:"requests_by_route_top5"`
}

// Category is one kind of work's API calls, herald's against a naive
// bot's.
type Category struct {
	Name  string `json:"name"`
	Work  int    `json:"work"`
	Calls int    `json:"api_calls"`
	Naive int    `json:"naive_api_calls"`
	// Wrong and NaiveWrong count work lost or done twice (tickets opened
	// twice, role changes not made or undone, replies never sent).
	Wrong      int `json:"work_wrong"`
	NaiveWrong int `json:"naive_work_wrong"`
	// Routes are herald's calls of the category by route.
	Routes map[string]int `json:"routes"`
}

// RouteCount is the requests to one route.
type RouteCount struct {
	Route string `json:"route"`
	Calls int    `json:"calls"`
}

// Categories of API calls, by the Discord routes they use.
const (
	catAnswers = "interaction answers"
	catRoles   = "member roles"
	catMenus   = "menu messages"
	catTickets = "tickets"
	catNotes   = "webhook notifications"
)

// kindCategory is the category of API calls each kind of work is done
// with.
var kindCategory = map[string]string{kindEdits: catMenus, kindClicks: catRoles, kindTickets: catTickets, kindCloses: catTickets, kindNotes: catNotes}

// against adds the naive bot's side, measured in the same run.
func (s *Summary) against(naive Summary) {
	s.Naive = &naive
	s.NaiveAPICalls = naive.APICalls
	for i := range s.ByCategory {
		s.ByCategory[i].Naive = naive.ByCategory[i].Calls
		s.ByCategory[i].NaiveWrong = naive.ByCategory[i].Wrong
	}
}

// category is the kind of work a request of herald's served.
func (d *Demo) category(r sim.RequestRecord) string {
	switch {
	case strings.HasPrefix(r.Route, "/interactions/"):
		return catAnswers
	case strings.HasPrefix(r.Route, "/webhooks/{webhook_id}/{webhook_token}"):
		if strings.HasPrefix(r.Path, "/webhooks/"+d.sim.ApplicationID()+"/") {
			return catAnswers // follow-ups and edits of replies
		}
		return catNotes
	case strings.HasPrefix(r.Route, "/guilds/{guild_id}/members/") || r.Route == "/guilds/{guild_id}" || r.Route == "/guilds/{guild_id}/roles":
		return catRoles
	case strings.HasPrefix(r.Path, "/channels/"+d.g.roles+"/"):
		return catMenus
	}
	for _, svc := range d.g.services {
		if strings.HasPrefix(r.Path, "/channels/"+svc.channel+"/") || strings.HasPrefix(r.Path, "/webhooks/"+svc.hookID) {
			return catNotes // reading a channel to learn a delivery's outcome, the webhook's check
		}
	}
	return catTickets
}

// summarize counts herald's requests since the scenario started, builds
// the naive bot's figures from the work sent, and adds the checks.
func (d *Demo) summarize(ctx context.Context, p *played, res drained) Summary {
	s := Summary{TimeScale: d.sc.TimeScale, RateLimitedByScope: map[string]int{}, ScenarioSeconds: res.playedFor.Seconds(),
		Drained: res.ok, DrainSeconds: res.took.Seconds(), HeraldDownSeconds: p.killedFor.Seconds()}
	c := res.checked
	calls := map[string]int{}
	routes := map[string]int{}
	byRoute := map[string]map[string]int{}
	for _, r := range d.sim.Requests() {
		if r.Time.Before(d.start) {
			continue
		}
		s.APICalls++
		cat := d.category(r)
		calls[cat]++
		routes[r.Method+" "+r.Route]++
		if byRoute[cat] == nil {
			byRoute[cat] = map[string]int{}
		}
		byRoute[cat][r.Method+" "+r.Route]++
		switch {
		case r.Status == http.StatusTooManyRequests:
			s.RateLimitedByScope[r.Scope]++
			if r.Scope != sim.ScopeShared {
				s.InvalidRequests++
			}
		case r.Status == http.StatusUnauthorized || r.Status == http.StatusForbidden:
			s.InvalidRequests++
		case r.Status >= 500:
			s.ServerErrors++
		}
	}
	for route, n := range routes {
		s.RequestsByRouteTop5 = append(s.RequestsByRouteTop5, RouteCount{route, n})
	}
	slices.SortFunc(s.RequestsByRouteTop5, func(a, b RouteCount) int { return b.Calls - a.Calls })
	s.RequestsByRouteTop5 = s.RequestsByRouteTop5[:min(5, len(s.RequestsByRouteTop5))]

	p.mu.Lock()
	defer p.mu.Unlock()
	var lat []float64
	var all []sent
	all = append(append(append(append(all, p.edits...), p.clicks...), p.opens...), p.closes...)
	for _, in := range all {
		st, _ := d.sim.Interaction(in.id)
		if st.Acked && st.AckLatencyMS != nil {
			s.Acked++
			lat = append(lat, *st.AckLatencyMS)
		}
	}
	s.Interactions = len(all)
	slices.Sort(lat)
	s.AckP50MS, s.AckP95MS, s.AckP99MS = percentile(lat, 50), percentile(lat, 95), percentile(lat, 99)

	notes, taken := 0, 0 // sent; answered 2xx
	for _, states := range p.notes {
		for _, st := range states {
			if st != unsent {
				notes++
			}
			if st == accepted {
				taken++
			}
		}
	}
	closing := map[string]bool{} // a close tried again closes one ticket
	for _, in := range p.closes {
		closing[in.thread] = true
	}
	work := map[string]int{catAnswers: len(all), catRoles: len(p.clicks), catMenus: len(p.edits), catTickets: len(p.opens) + len(closing), catNotes: notes}
	wrong := map[string]int{catAnswers: c.repliesMissing}
	for kind, n := range c.lost {
		wrong[kindCategory[kind]] += n
	}
	for kind, n := range c.duplicates {
		wrong[kindCategory[kind]] += n
	}
	for _, cat := range []string{catAnswers, catRoles, catMenus, catTickets, catNotes} {
		s.ByCategory = append(s.ByCategory, Category{Name: cat, Work: work[cat], Calls: calls[cat], Wrong: wrong[cat], Routes: byRoute[cat]})
	}

	menuEdits := 0
	for _, r := range d.sim.Requests() {
		if !r.Time.Before(d.start) && r.Method == http.MethodPatch && strings.HasPrefix(r.Path, "/channels/"+d.g.roles+"/messages/") && r.Status < 300 {
			menuEdits++
		}
	}
	s.Coalesced = max(len(p.edits)-menuEdits, 0) + max(c.certainToggles-c.roleChanges, 0)
	s.Deduplicated = c.deduplicated
	s.NotificationsSent, s.NotificationsAccepted, s.NotificationsDelivered = notes, taken, c.delivered
	s.TicketsOpened, s.TicketsClosed = c.opened, c.closed
	s.Lost, s.Duplicates = c.total(c.lost), c.total(c.duplicates)
	if s.Lost > 0 {
		s.LostByKind = c.lost
	}
	if s.Duplicates > 0 {
		s.DuplicatesByKind = c.duplicates
	}
	s.Problems = c.problems
	s.Uncertain = c.uncertain
	return s
}

// percentile is the p-th percentile of sorted values (nearest rank).
func percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(float64(len(sorted))*p/100)) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}
