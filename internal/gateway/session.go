// Package gateway holds herald's connection to Discord's gateway: one
// discordgo session, used for the gateway only, whose interactions reach
// herald's fast path. herald's REST calls go through internal/discord/rest.
package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"

	"github.com/bwmarrin/discordgo"
)

// Options configure a Session.
type Options struct {
	Token string
	// Transport sends discordgo's one REST call, GET /gateway, which it
	// makes to find the gateway's URL: herald's transport engine, with
	// the host rewritten to HERALD_DISCORD_API. Every other discordgo REST
	// method is refused (see gatewayOnly).
	Transport  http.RoundTripper
	ShardID    int
	ShardCount int
	// Intents are what the session identifies with: only those the
	// application has (internal/discord/intents), or Discord closes the
	// connection with 4014.
	Intents discordgo.Intent
	// OnInteraction receives every INTERACTION_CREATE: herald's fast path.
	OnInteraction func(*discordgo.Interaction)
	// Events are the features' handlers of other events.
	Events *Events
	Logger *slog.Logger
}

// Session is one gateway connection.
type Session struct {
	dg  *discordgo.Session
	log *slog.Logger

	mu      sync.Mutex
	ready   bool
	closing bool
	guilds  map[string]bool
}

// Open connects to the gateway and returns once discordgo has identified;
// READY arrives shortly after and Ready reports it.
func Open(ctx context.Context, o Options) (*Session, error) {
	if o.Transport == nil || o.OnInteraction == nil || o.Logger == nil {
		return nil, errors.New("gateway: Options need Transport, OnInteraction and Logger")
	}
	dg, err := discordgo.New("Bot " + o.Token)
	if err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	dg.Client = &http.Client{Transport: gatewayOnly{o.Transport}}
	// The transport engine owns retries and rate limits; discordgo's own
	// would sleep on 429s without bound and retry 502s blindly.
	dg.ShouldRetryOnRateLimit = false
	dg.MaxRestRetries = 0
	dg.StateEnabled = false
	dg.Identify.Intents = o.Intents
	if o.ShardCount > 1 {
		dg.ShardID, dg.ShardCount = o.ShardID, o.ShardCount
	}
	s := &Session{dg: dg, log: o.Logger, guilds: map[string]bool{}}
	dg.AddHandler(s.onReady)
	dg.AddHandler(s.onResumed)
	dg.AddHandler(s.onDisconnect)
	dg.AddHandler(s.onGuildCreate)
	dg.AddHandler(s.onGuildDelete)
	dg.AddHandler(func(_ *discordgo.Session, ic *discordgo.InteractionCreate) { o.OnInteraction(ic.Interaction) })
	for _, h := range o.Events.all() {
		dg.AddHandler(h)
	}
	if err := dg.Open(); err != nil {
		return nil, fmt.Errorf("gateway: open: %w", err)
	}
	return s, nil
}

// Discord is the underlying discordgo session, for handlers to register on.
func (s *Session) Discord() *discordgo.Session { return s.dg }

// Ready returns nil while the session is connected and has seen READY.
func (s *Session) Ready() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.ready {
		return errors.New("gateway not connected")
	}
	return nil
}

// Guilds is the number of guilds the session serves.
func (s *Session) Guilds() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.guilds)
}

// Close disconnects from the gateway.
func (s *Session) Close() error {
	s.mu.Lock()
	s.ready, s.closing = false, true
	s.mu.Unlock()
	return s.dg.Close()
}

func (s *Session) onReady(_ *discordgo.Session, r *discordgo.Ready) {
	s.mu.Lock()
	s.ready = true
	s.mu.Unlock()
	s.log.Info("gateway ready", "user", r.User.Username, "user_id", r.User.ID, "guilds", len(r.Guilds), "shard", r.Shard)
}

func (s *Session) onResumed(_ *discordgo.Session, _ *discordgo.Resumed) {
	s.mu.Lock()
	s.ready = true
	s.mu.Unlock()
	s.log.Info("gateway resumed")
}

func (s *Session) onDisconnect(_ *discordgo.Session, _ *discordgo.Disconnect) {
	s.mu.Lock()
	s.ready = false
	closing := s.closing
	s.mu.Unlock()
	if closing {
		s.log.Info("gateway closed")
		return
	}
	s.log.Warn("gateway disconnected; reconnecting")
}

func (s *Session) onGuildCreate(_ *discordgo.Session, g *discordgo.GuildCreate) {
	s.mu.Lock()
	s.guilds[g.ID] = true
	s.mu.Unlock()
	s.log.Info("guild available", "guild_id", g.ID, "name", g.Name)
}

func (s *Session) onGuildDelete(_ *discordgo.Session, g *discordgo.GuildDelete) {
	s.mu.Lock()
	delete(s.guilds, g.ID)
	s.mu.Unlock()
}

// RouteLibraryLogs sends discordgo's own log lines to log. discordgo keeps
// its logger in a package variable, so this is set once, at start-up.
func RouteLibraryLogs(log *slog.Logger) {
	discordgo.Logger = func(level, _ int, format string, a ...any) {
		lvl := slog.LevelDebug
		switch level {
		case discordgo.LogError:
			lvl = slog.LevelError
		case discordgo.LogWarning:
			lvl = slog.LevelWarn
		case discordgo.LogInformational:
			lvl = slog.LevelInfo
		}
		log.Log(context.Background(), lvl, fmt.Sprintf(format, a...), "component", "discordgo")
	}
}

// gatewayOnly lets discordgo's GET /gateway through and refuses every
// other REST call: herald calls Discord only through internal/discord/rest,
// whose typed errors the job layer understands.
type gatewayOnly struct{ next http.RoundTripper }

func (g gatewayOnly) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodGet && strings.HasSuffix(req.URL.Path, "/gateway") {
		return g.next.RoundTrip(req)
	}
	return nil, fmt.Errorf("gateway: discordgo REST call %s refused: herald calls Discord through internal/discord/rest", req.Method)
}
