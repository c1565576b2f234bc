package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/gorilla/websocket"
	"github.com/jonboulle/clockwork"
)

// Options configure a Session.
type Options struct {
	Token string
	// Transport sends GET /gateway/bot, read before every IDENTIFY:
	// herald's transport engine, with the host rewritten to
	// HERALD_DISCORD_API. discordgo itself calls nothing (see gatewayOnly).
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
	// Clock times herald's own waits: after INVALID_SESSION, for the
	// session start limit, between identifies and between failed
	// reconnects. nil is the real clock.
	Clock clockwork.Clock
	// Random gives where in Discord's 1–5 s the wait after
	// INVALID_SESSION falls, as a number in [0,1). nil is math/rand/v2.
	Random func() float64
	// Pacer spaces the identifies of the sessions sharing it (shards of
	// one process, or of all processes on the token) by max_concurrency;
	// nil paces this session alone.
	Pacer Pacer
	// IdentifyWindow is max_concurrency's window: Discord's 5 s when
	// zero. Only a simulator configured likewise takes a shorter one.
	IdentifyWindow time.Duration
	// Answer, when set, is GET /gateway/bot's answer read just before
	// (Recommended): the first IDENTIFY of the sessions given it goes on
	// it while it is fresh.
	Answer *Answer
}

// Session is one gateway session, kept connected until Close or a fatal
// close code.
type Session struct {
	o      Options
	log    *slog.Logger
	clock  clockwork.Clock
	dialer *websocket.Dialer

	ctx    context.Context // cancelled by Close
	cancel context.CancelFunc
	errc   chan error    // the fatal error that stopped the session
	done   chan struct{} // closed when the supervisor returns
	once   sync.Once     // Close

	mu          sync.Mutex
	dg          *discordgo.Session // the current session's; a new one per IDENTIFY
	handlers    []func()           // remove dg's event handlers
	resumeURL   string             // READY's resume_gateway_url; "" when dg has nothing to resume
	target      string             // the URL the connection being opened must use
	identifying bool               // the connection being opened sends IDENTIFY
	conn        *conn              // the connection being opened, or open
	ready       bool
	guilds      map[string]bool

	replay replay
}

// Open connects to the gateway and returns once the session is
// identified: after READY. It waits for the session start limit when no
// start remains. A fatal close (a rejected token, a privileged intent the
// application has not enabled...) is a *FatalCloseError; once Open has
// returned, the session reconnects by itself and reports a fatal close on
// Err. Cancelling ctx aborts Open, not the session it returned.
func Open(ctx context.Context, o Options) (*Session, error) {
	if o.Transport == nil || o.OnInteraction == nil || o.Logger == nil {
		return nil, errors.New("gateway: Options need Transport, OnInteraction and Logger")
	}
	if o.Clock == nil {
		o.Clock = clockwork.NewRealClock()
	}
	if o.Random == nil {
		o.Random = rand.Float64
	}
	if o.Pacer == nil {
		o.Pacer = NewPacer(o.Clock)
	}
	s := &Session{o: o, log: o.Logger, clock: o.Clock, errc: make(chan error, 1), done: make(chan struct{}), guilds: map[string]bool{}}
	s.ctx, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
	s.dialer = s.newDialer()
	stop := context.AfterFunc(ctx, s.cancel)
	defer stop()
	if err := s.open(false, 0); err != nil {
		s.cancel()
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return nil, err
	}
	go s.supervise()
	return s, nil
}

// Err delivers the *FatalCloseError that stopped the session by itself;
// nothing when Close stops it.
func (s *Session) Err() <-chan error { return s.errc }

// Discord is the current gateway session's discordgo session; each new
// session (IDENTIFY) has its own.
func (s *Session) Discord() *discordgo.Session {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dg
}

// Ready returns nil while the session is connected and has seen READY or
// RESUMED.
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

// Close ends the session: discordgo closes the connection with 1000, so
// Discord invalidates the session and the bot appears offline. It returns
// nil: what discordgo's close meets is logged.
func (s *Session) Close() error {
	s.once.Do(func() {
		s.cancel()
		<-s.done
		s.mu.Lock()
		s.ready = false
		dg, handlers := s.dg, s.handlers
		s.mu.Unlock()
		// No event reaches herald once Close returns. discordgo's Close
		// sends the close frame (1000) and then sleeps a second for the
		// server to hang up: that second is spent in the background,
		// not by whoever stops the session (a shard handover, a stop).
		for _, remove := range handlers {
			remove()
		}
		go func() {
			if err := dg.Close(); err != nil {
				s.log.Debug("gateway close", "err", err)
			}
		}()
		s.log.Info("gateway closed")
	})
	return nil
}

// newDiscordgo returns the discordgo session of a new gateway session:
// Open sends IDENTIFY, as it has no session id yet.
func (s *Session) newDiscordgo() (*discordgo.Session, error) {
	dg, err := discordgo.New("Bot " + s.o.Token)
	if err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	dg.Client = &http.Client{Transport: gatewayOnly{s}}
	dg.Dialer = s.dialer
	dg.ShouldReconnectOnError = false // the supervisor reconnects
	// No REST goes through discordgo; its own retries would sleep on
	// 429s without bound.
	dg.ShouldRetryOnRateLimit = false
	dg.MaxRestRetries = 0
	dg.StateEnabled = false
	// Plain JSON frames, which conn reads.
	dg.Compress = false
	dg.Identify.Compress = false
	dg.Identify.Intents = s.o.Intents
	if s.o.ShardCount > 1 {
		dg.ShardID, dg.ShardCount = s.o.ShardID, s.o.ShardCount
	}
	handlers := []func(){dg.AddHandler(s.onGuildCreate), dg.AddHandler(s.onGuildDelete),
		dg.AddHandler(func(_ *discordgo.Session, ic *discordgo.InteractionCreate) { s.o.OnInteraction(ic.Interaction) })}
	for _, h := range s.o.Events.all() {
		handlers = append(handlers, dg.AddHandler(h))
	}
	for _, h := range s.o.Events.members() {
		handlers = append(handlers, dg.AddHandler(func(_ *discordgo.Session, e *discordgo.GuildMemberUpdate) {
			if e.Member != nil && e.User != nil {
				h(Member{GuildID: e.GuildID, UserID: e.User.ID, Roles: e.Roles, Age: s.replay.age(s.clock.Now())})
			}
		}))
	}
	s.mu.Lock()
	s.handlers = handlers
	s.mu.Unlock()
	return dg, nil
}

// attach wraps the socket of the connection being opened. Until Open is
// done with it, closing the session drops it.
func (s *Session) attach(raw net.Conn) *conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := newConn(raw, s.identifying, s.onReady, s.onResumed, s.clock.Now)
	c.unwatch = context.AfterFunc(s.ctx, func() { raw.Close() })
	s.conn = c
	return c
}

func (s *Session) targetURL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.target
}

func (s *Session) onReady(r ready) {
	s.mu.Lock()
	s.ready, s.resumeURL = true, r.ResumeGatewayURL
	s.mu.Unlock()
	s.log.Info("gateway ready", "user", r.User.Username, "user_id", r.User.ID, "guilds", len(r.Guilds), "shard", s.o.ShardID)
}

func (s *Session) onResumed() {
	s.replay.resumed(s.clock.Now())
	s.mu.Lock()
	s.ready = true
	s.mu.Unlock()
	s.log.Info("gateway resumed")
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
		for _, v := range a {
			if err, ok := v.(error); ok && errors.Is(err, errStaleURL) {
				lvl = slog.LevelDebug // the supervisor's doing, not a failure
			}
		}
		log.Log(context.Background(), lvl, fmt.Sprintf(format, a...), "component", "discordgo")
	}
}
