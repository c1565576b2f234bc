package guildroles

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/bwmarrin/discordgo"
)

// channel is the Postgres notification channel on which processes tell
// each other a guild changed; the payload is the sending reader's id and
// the guild's, separated by a space.
const channel = "herald_guild_changed"

// Handlers are the gateway events that make a guild's snapshot out of
// date: its roles created, changed (permissions, positions) or deleted,
// the guild itself (its owner), and the bot's own member record (its
// roles). Each forgets the guild here and tells the other processes.
func (r *Reader) Handlers() []any {
	return []any{
		func(_ *discordgo.Session, e *discordgo.GuildRoleCreate) { r.Changed(e.GuildID) },
		func(_ *discordgo.Session, e *discordgo.GuildRoleUpdate) { r.Changed(e.GuildID) },
		func(_ *discordgo.Session, e *discordgo.GuildRoleDelete) { r.Changed(e.GuildID) },
		func(_ *discordgo.Session, e *discordgo.GuildUpdate) {
			if e.Guild != nil {
				r.Changed(e.ID)
			}
		},
		func(_ *discordgo.Session, e *discordgo.GuildMemberUpdate) {
			if e.Member != nil && e.User != nil && e.User.ID == r.botID {
				r.Changed(e.GuildID)
			}
		},
	}
}

// Changed forgets guildID's snapshot and, once Listen runs, tells every
// process to.
func (r *Reader) Changed(guildID string) {
	r.Forget(guildID)
	if r.db == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// Postgres unreachable: the others miss this news and keep their
	// snapshot for at most Heard.
	r.db.Exec(ctx, `SELECT pg_notify($1, $2)`, channel, r.id+" "+guildID)
}

// Listen hears the other processes' news of changed guilds on a
// connection of its own until ctx ends, opening it again when lost.
// While it listens, snapshots serve for Heard; while it does not, for
// the short window, and every snapshot is forgotten when it listens
// again, since news may have been missed meanwhile.
func (r *Reader) Listen(ctx context.Context, log *slog.Logger) {
	for ctx.Err() == nil {
		err := r.listen(ctx)
		r.hearing.Store(false)
		if ctx.Err() == nil {
			log.WarnContext(ctx, "guildroles: not hearing of changed guilds from other processes; role checks read Discord more often", "err", err)
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}
}

func (r *Reader) listen(ctx context.Context) error {
	pooled, err := r.db.Acquire(ctx)
	if err != nil {
		return err
	}
	// A connection that listens is never handed to anyone else.
	conn := pooled.Hijack()
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, `LISTEN `+channel); err != nil {
		return err
	}
	r.forgetAll()
	r.hearing.Store(true)
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		// Its own news this reader acted on when it sent it.
		if from, guildID, _ := strings.Cut(n.Payload, " "); from != r.id {
			r.Forget(guildID)
		}
	}
}

// forgetAll drops every snapshot and member read.
func (r *Reader) forgetAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	clear(r.reads)
}
