package demo

import (
	"context"
	"math"
	"net/http"
	"slices"
	"strings"
	"time"

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
	// scenario; NaiveAPICalls what a naive bot would have made for the
	// same work (see naiveCalls). ByCategory splits both.
	APICalls      int        `json:"api_calls"`
	NaiveAPICalls int        `json:"naive_api_calls"`
	ByCategory    []Category `json:"by_category"`
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

// naiveCalls is what a naive bot — one that does each piece of work as it
// comes, with no coalescing, deduplication or reconciliation — makes for
// the same work, per category:
//   - interaction answers: every interaction is answered and then gets one
//     follow-up with its result (2);
//   - member roles: every click changes its role at once (1), with no
//     read of the member first;
//   - menu messages: every saved edit edits the menu's message (1);
//   - tickets: every panel click, double clicks included, creates a
//     thread, adds the opener, posts the welcome and the staff notice (4);
//     every close posts the closing message, reads one page of history,
//     uploads the transcript, opens the DM channel, sends the DM and
//     archives the thread (6);
//   - webhook notifications: one execute each (1).
//
// Every call a naive bot would make while the 5xx window is open is
// retried blindly until it succeeds: 1/(1-rate) attempts on average. Its
// 429 retries are not counted, so the naive figure is a lower bound.
var naivePer = map[string]int{catAnswers: 2, catRoles: 1, catMenus: 1, catTickets + " open": 4, catTickets + " close": 6, catNotes: 1}

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
	for _, r := range d.sim.Requests() {
		if r.Time.Before(d.start) {
			continue
		}
		s.APICalls++
		calls[d.category(r)]++
		routes[r.Method+" "+r.Route]++
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

	// The naive bot's calls, each weighed by its blind retries if the 5xx
	// window was open when it would have made them.
	inWindow := func(at time.Time) bool {
		t := at.Sub(d.start)
		return t >= d.sc.FaultAt && t < d.sc.FaultAt+d.sc.FaultFor
	}
	retries := 1 / (1 - d.sc.FaultRate)
	naive := map[string]float64{}
	weigh := func(cat string, per int, at time.Time) {
		n := float64(per)
		if inWindow(at) && cat != catAnswers {
			n *= retries
		}
		naive[cat] += n
	}
	notes := 0
	for _, in := range all {
		weigh(catAnswers, naivePer[catAnswers], in.at)
	}
	for _, in := range p.clicks {
		weigh(catRoles, naivePer[catRoles], in.at)
	}
	for _, in := range p.edits {
		weigh(catMenus, naivePer[catMenus], in.at)
	}
	for _, in := range p.opens {
		weigh(catTickets, naivePer[catTickets+" open"], in.at)
	}
	closing := map[string]bool{} // a close tried again closes one ticket
	for _, in := range p.closes {
		if !closing[in.thread] {
			closing[in.thread] = true
			weigh(catTickets, naivePer[catTickets+" close"], in.at)
		}
	}
	taken := 0 // answered 2xx by the proxy
	for s, states := range p.notes {
		for i, st := range states {
			if st != unsent {
				notes++
				weigh(catNotes, naivePer[catNotes], p.notesAt[s][i])
			}
			if st == accepted {
				taken++
			}
		}
	}
	work := map[string]int{catAnswers: len(all), catRoles: len(p.clicks), catMenus: len(p.edits), catTickets: len(p.opens) + len(closing), catNotes: notes}
	for _, cat := range []string{catAnswers, catRoles, catMenus, catTickets, catNotes} {
		n := int(math.Round(naive[cat]))
		s.NaiveAPICalls += n
		s.ByCategory = append(s.ByCategory, Category{Name: cat, Work: work[cat], Calls: calls[cat], Naive: n})
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
