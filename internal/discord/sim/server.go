// Package sim is an in-memory Discord: REST routes with Discord's rate
// limits, error shapes and permission checks, a websocket gateway, fault
// injection and a control API under /_sim/ for tests, the demo and
// benchmarks.
package sim

import (
	"crypto/ed25519"
	"encoding/json"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/herald-bot/herald/internal/discord/sim/wsgateway"
)

// Options configure a Server. The zero value is a simulator with Discord's
// defaults on the real clock.
type Options struct {
	// Clock drives every window, deadline and timestamp.
	Clock clockwork.Clock
	// TimeScale multiplies every rate-limit window and deadline; 0.1 makes
	// them ten times shorter. Zero means 1.
	TimeScale float64
	// Token, when set, is the only bot token accepted; others get 401.
	Token string
	// BotName is the bot user's username.
	BotName string
	// Limits override the bucket limit of routes, keyed by route
	// ("POST /channels/{channel_id}/messages").
	Limits map[string]Limit
	// GlobalLimit is the requests per second allowed per token (50).
	GlobalLimit int
	// InvalidRequestLimit is how many 401/403/429 answers in
	// InvalidRequestWindow get the client blocked (10,000 per 10 minutes).
	InvalidRequestLimit  int
	InvalidRequestWindow time.Duration
	// BlockDuration is how long a blocked client gets header-less 429s.
	BlockDuration time.Duration
	// Seed makes rate-based faults reproducible.
	Seed uint64
	// HeartbeatInterval is the gateway heartbeat before scaling (41.25 s).
	HeartbeatInterval time.Duration
	Logger            *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.Clock == nil {
		o.Clock = clockwork.NewRealClock()
	}
	if o.TimeScale <= 0 {
		o.TimeScale = 1
	}
	if o.BotName == "" {
		o.BotName = "herald"
	}
	if o.GlobalLimit <= 0 {
		o.GlobalLimit = 50
	}
	if o.InvalidRequestLimit <= 0 {
		o.InvalidRequestLimit = 10000
	}
	if o.InvalidRequestWindow <= 0 {
		o.InvalidRequestWindow = 10 * time.Minute
	}
	if o.BlockDuration <= 0 {
		o.BlockDuration = time.Hour
	}
	if o.HeartbeatInterval <= 0 {
		o.HeartbeatInterval = 41250 * time.Millisecond
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Discord's interaction timings, before scaling.
const (
	interactionDeadline = 3 * time.Second
	interactionTokenTTL = 15 * time.Minute
	nonceWindow         = 5 * time.Minute
)

// Server is the simulator. It is an http.Handler serving /api/v10/ (and
// /api/v9/), the gateway websocket at /gateway-ws (and its
// resume_gateway_url, /gateway-ws/resume) and the control API under
// /_sim/.
type Server struct {
	opts    Options
	clock   clockwork.Clock
	routes  []*route
	control *http.ServeMux
	gw      *wsgateway.Gateway

	mu       sync.Mutex
	token    string // the one bot token accepted ("": any); ResetToken changes it
	st       *state
	limits   map[string]Limit  // route key → bucket limit override
	global   int               // global limit per second
	invalidN int               // invalid requests that get a client blocked
	groups   map[string]string // route key → bucket group after a hash change
	hashGen  int
	buckets  map[string]*window
	globals  map[string]*window
	shared   map[string]*window
	invalid  invalidRequests
	faults   map[string]*routeFault
	rng      *rand.Rand
	requests []RequestRecord
	stats    statsCounters
	// key signs what the simulator POSTs to the application's Interactions
	// Endpoint URL, endpoint ("" when unset): the application's, kept
	// across Reset.
	key      ed25519.PrivateKey
	endpoint string
	outgoing *http.Client
}

// New builds a simulator with an empty world: the bot user and no guilds.
func New(opts Options) *Server {
	opts = opts.withDefaults()
	s := &Server{
		opts:   opts,
		token:  opts.Token,
		clock:  opts.Clock,
		routes: routeTable(),
		rng:    rand.New(rand.NewPCG(opts.Seed, opts.Seed^0x5eed)),
	}
	s.resetLocked()
	s.key = applicationKey(s.st.appID)
	// Interactions are POSTed at once, as many as are created: with
	// http.DefaultTransport's 2 idle connections per host, every POST
	// beyond two at once would dial and close a connection of its own.
	s.outgoing = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1024},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	s.gw = newGateway(s)
	s.control = s.controlMux()
	return s
}

// resetLocked returns the simulator to its initial state, keeping the
// application (its id, flags and bot user) so connected clients stay
// valid.
func (s *Server) resetLocked() {
	old := s.st
	s.st = newState(s.clock.Now(), s.opts.BotName)
	if old != nil {
		// The application is the Developer Portal's, not the world's.
		delete(s.st.users, s.st.botID)
		s.st.botID, s.st.appID, s.st.appFlags = old.botID, old.appID, old.appFlags
		s.st.users[old.botID] = &user{id: old.botID, username: s.opts.BotName, bot: true}
	}
	s.limits = map[string]Limit{}
	for k, v := range s.opts.Limits {
		s.limits[k] = v
	}
	s.global = s.opts.GlobalLimit
	s.invalidN = s.opts.InvalidRequestLimit
	s.groups = map[string]string{}
	s.buckets = map[string]*window{}
	s.globals = map[string]*window{}
	s.shared = map[string]*window{}
	s.invalid = invalidRequests{}
	s.faults = map[string]*routeFault{}
	s.requests = nil
	s.stats = statsCounters{byStatus: map[int]int{}, rateLimited: map[string]int{}}
}

// BotUserID is the id of the simulated bot user. It differs from
// ApplicationID, as it does for applications older than Discord's rule
// that a bot's user id equals its application's.
func (s *Server) BotUserID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.botID
}

// ApplicationID is the id of the simulated bot's application.
func (s *Server) ApplicationID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.appID
}

// Close disconnects every gateway session.
func (s *Server) Close() { s.gw.Close() }

// scaled applies the time scale to a Discord duration.
func (s *Server) scaled(d time.Duration) time.Duration {
	return time.Duration(float64(d) * s.opts.TimeScale)
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	switch {
	case strings.HasPrefix(path, "/api/v10/"):
		s.serveREST(w, r, strings.TrimPrefix(path, "/api/v10"))
	case strings.HasPrefix(path, "/api/v9/"):
		s.serveREST(w, r, strings.TrimPrefix(path, "/api/v9"))
	case path == "/gateway-ws", path == "/gateway-ws/", path == "/gateway-ws/resume", path == "/gateway-ws/resume/":
		s.gw.ServeHTTP(w, r)
	case strings.HasPrefix(path, "/_sim/"):
		s.control.ServeHTTP(w, r)
	default:
		writeJSON(w, http.StatusNotFound, errNotFound.body())
	}
}

func writeJSON(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if body != nil {
		json.NewEncoder(w).Encode(body)
	}
}
