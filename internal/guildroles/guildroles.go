// Package guildroles reads a guild's roles, its owner and the bot's own
// roles for every feature that checks a role before changing it. Reads of
// one guild share one fetch — one pair of requests however many clicks
// ask — so a burst of role changes does not spend Discord's budget on
// reading. A snapshot is Discord's answer at Snapshot.Read; it serves
// until the gateway says the guild's roles, its owner or the bot's roles
// changed (Handlers), heard by every herald process through Postgres
// (Listen), and at most a minute; while that news cannot be heard it
// serves for the short window only. A member whose rank a check needs is
// read the same way, for the short window. check.go holds which
// permissions make a role dangerous.
package guildroles

import (
	"context"
	"crypto/rand"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jonboulle/clockwork"

	"github.com/herald-bot/herald/internal/discord/rest"
)

// Snapshot is one read of a guild.
type Snapshot struct {
	GuildID  string
	OwnerID  string
	Roles    map[string]*discordgo.Role
	BotRoles []string
	Read     time.Time
}

// Top is the position of the highest of roleIDs (0: only @everyone):
// a member can manage only roles below their top.
func (s *Snapshot) Top(roleIDs []string) int {
	top := 0
	for _, id := range roleIDs {
		if r := s.Roles[id]; r != nil && r.Position > top {
			top = r.Position
		}
	}
	return top
}

// BotTop is the position of the bot's highest role: it can manage only
// roles below it.
func (s *Snapshot) BotTop() int { return s.Top(s.BotRoles) }

// Reader shares reads of guilds, and of the members whose rank a check
// needs (the admin who started a long bulk action).
type Reader struct {
	discord *rest.Client
	botID   string
	window  time.Duration
	clock   clockwork.Clock // what the windows are measured on
	// db carries news of changes between processes once Listen runs;
	// hearing is set while its connection listens.
	db      *pgxpool.Pool
	hearing atomic.Bool
	id      string // names this reader's news to others

	mu    sync.Mutex
	reads map[key]*entry
}

// key names a read: a guild (user empty) or one of its members.
type key struct{ guildID, userID string }

type entry struct {
	done chan struct{} // closed when the read finished
	at   time.Time
	val  any
	err  error
}

// Option configures a Reader.
type Option func(*Reader)

// WithClock measures how long reads serve (the window, Heard) and stamps
// Snapshot.Read on c instead of the real clock, so a test can step past a
// window rather than sleep.
func WithClock(c clockwork.Clock) Option { return func(r *Reader) { r.clock = c } }

// New returns a reader whose snapshots serve for window until Listen
// hears of changes through db (nil: this process alone, never hearing).
func New(discord *rest.Client, db *pgxpool.Pool, botID string, window time.Duration, opts ...Option) *Reader {
	r := &Reader{discord: discord, db: db, botID: botID, window: window, clock: clockwork.NewRealClock(), reads: map[key]*entry{}, id: rand.Text()}
	for _, o := range opts {
		o(r)
	}
	return r
}

// BotID is the user id whose roles the snapshots read as the bot's.
func (r *Reader) BotID() string { return r.botID }

// Get returns a snapshot of guildID no older than the window, reading
// it when there is none; concurrent callers wait for one read. A failed
// read is not kept.
func (r *Reader) Get(ctx context.Context, guildID string) (*Snapshot, error) {
	v, err := r.shared(ctx, key{guildID: guildID}, func(ctx context.Context) (any, error) { return r.readGuild(ctx, guildID) })
	if err != nil {
		return nil, err
	}
	return v.(*Snapshot), nil
}

// Member returns userID's member record in guildID no older than the
// window, shared the same way; Discord's 404 (they left) is returned
// as the client's error.
func (r *Reader) Member(ctx context.Context, guildID, userID string) (*discordgo.Member, error) {
	v, err := r.shared(ctx, key{guildID, userID}, func(ctx context.Context) (any, error) { return r.discord.Member(ctx, guildID, userID) })
	if err != nil {
		return nil, err
	}
	return v.(*discordgo.Member), nil
}

// shared returns the read of k no older than the window, or starts one.
// The read runs detached from any one caller, so a caller giving up does
// not fail the others; the transport bounds it.
func (r *Reader) shared(ctx context.Context, k key, read func(context.Context) (any, error)) (any, error) {
	r.mu.Lock()
	e := r.reads[k]
	if e != nil {
		select {
		case <-e.done:
			if e.err != nil || r.clock.Since(e.at) >= r.serves(k) {
				e = nil
			}
		default: // a read is in flight: share it
		}
	}
	if e == nil {
		e = &entry{done: make(chan struct{})}
		r.reads[k] = e
		go func() {
			defer close(e.done)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			e.val, e.err = read(ctx)
			e.at = r.clock.Now()
		}()
	}
	r.mu.Unlock()
	select {
	case <-e.done:
		return e.val, e.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// readGuild fetches the guild (roles, owner) and the bot's member record.
func (r *Reader) readGuild(ctx context.Context, guildID string) (*Snapshot, error) {
	g, err := r.discord.Guild(ctx, guildID)
	if err != nil {
		return nil, err
	}
	bot, err := r.discord.Member(ctx, guildID, r.botID)
	if err != nil {
		return nil, err
	}
	s := &Snapshot{GuildID: guildID, OwnerID: g.OwnerID, Roles: map[string]*discordgo.Role{}, BotRoles: bot.Roles, Read: r.clock.Now()}
	for _, role := range g.Roles {
		s.Roles[role.ID] = role
	}
	return s, nil
}

// Heard is how long a guild's snapshot serves while the reader hears of
// its changes: a change whose news was lost (a process that died between
// the event and its notification) is out of date no longer than this.
const Heard = time.Minute

// serves is how long the read of k is good for.
func (r *Reader) serves(k key) time.Duration {
	if k.userID == "" && r.hearing.Load() {
		return Heard
	}
	return r.window
}

// Forget drops guildID's snapshot and member reads: the next Get or
// Member reads again (callers already waiting on a read still get it).
func (r *Reader) Forget(guildID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for k := range r.reads {
		if k.guildID == guildID {
			delete(r.reads, k)
		}
	}
}
