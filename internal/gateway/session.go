// Package gateway holds herald's connection to Discord's gateway: one
// discordgo session whose REST calls go through herald's transport engine,
// and whose events reach herald's handlers.
package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"

	"github.com/bwmarrin/discordgo"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/herald-bot/herald/internal/i18n"
	"github.com/herald-bot/herald/internal/work"
)

// Intents are the gateway events herald needs: guilds (roles, channels,
// threads), members (leaves close tickets), messages (deletions of menus
// and ticket panels). Interactions arrive without any intent.
const Intents = discordgo.IntentsGuilds | discordgo.IntentsGuildMembers | discordgo.IntentsGuildMessages

// Options configure a Session.
type Options struct {
	Token string
	// Client sends the session's REST calls, herald's transport engine
	// behind it; its base URL rewriting points discordgo at HERALD_DISCORD_API.
	Client     *http.Client
	ShardID    int
	ShardCount int
	// Router and Catalog answer interactions; a nil Router answers every
	// interaction as outdated. DB and Jobs hold the work handlers enqueue.
	Router     *Router
	Catalog    *i18n.Catalog
	DB         *pgxpool.Pool
	Jobs       *work.Client
	Registerer prometheus.Registerer
	Logger     *slog.Logger
}

// Session is one gateway connection.
type Session struct {
	dg      *discordgo.Session
	log     *slog.Logger
	client  *http.Client
	router  *Router
	catalog *i18n.Catalog
	db      *pgxpool.Pool
	jobs    *work.Client
	fastPathMetrics
	idle idleTracker

	mu      sync.Mutex
	ready   bool
	closing bool
	guilds  map[string]bool
}

// Open connects to the gateway and returns once discordgo has identified;
// READY arrives shortly after and Ready reports it.
func Open(ctx context.Context, o Options) (*Session, error) {
	if o.Catalog == nil || o.Client == nil || o.Logger == nil {
		return nil, errors.New("gateway: Options need Client, Catalog and Logger")
	}
	dg, err := discordgo.New("Bot " + o.Token)
	if err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	dg.Client = o.Client
	// The transport engine owns retries and rate limits; discordgo's own
	// would sleep on 429s without bound and retry 502s blindly.
	dg.ShouldRetryOnRateLimit = false
	dg.MaxRestRetries = 0
	dg.StateEnabled = false
	dg.Identify.Intents = Intents
	if o.ShardCount > 1 {
		dg.ShardID, dg.ShardCount = o.ShardID, o.ShardCount
	}
	router := o.Router
	if router == nil {
		router = NewRouter()
	}
	s := &Session{dg: dg, log: o.Logger, client: o.Client, router: router, catalog: o.Catalog,
		db: o.DB, jobs: o.Jobs, guilds: map[string]bool{}}
	s.fastPathMetrics = newFastPathMetrics(o.Registerer)
	dg.AddHandler(s.onReady)
	dg.AddHandler(s.onResumed)
	dg.AddHandler(s.onDisconnect)
	dg.AddHandler(s.onGuildCreate)
	dg.AddHandler(s.onGuildDelete)
	dg.AddHandler(s.onInteraction)
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
