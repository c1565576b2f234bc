// Package interaction is herald's fast path: every interaction is routed
// (Mux), its handler validates it and writes its work durably in one
// transaction with the idempotency ledger, the answer goes out, and only
// then may the work run. Features meet Discord's interactions here.
package interaction

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/herald-bot/herald/internal/i18n"
	"github.com/herald-bot/herald/internal/work"
)

// Interaction is what a handler gets: Discord's interaction, how it was
// routed, the member's language and when it arrived.
type Interaction struct {
	*discordgo.Interaction
	// Path is the route: a command path ("/herald/jobs") or the custom-ID
	// pattern that matched ("rolemenu:1:pick:{menu}:{option}").
	Path string
	// Vars are the pattern's variables ({"menu": "12", "option": "3"}).
	Vars map[string]string
	// CustomID is a component's or modal's parsed custom_id.
	CustomID CustomID
	// RouteVersion is part of the idempotency key: the custom_id's version,
	// 1 for commands.
	RouteVersion int
	Localizer    *i18n.Localizer
	Received     time.Time

	fp     *FastPath
	tx     pgx.Tx
	held   []int64 // jobs to release once the answer is sent
	replay bool    // another delivery of this interaction did the work
}

// ErrReplay is returned by Tx and Enqueue when Discord delivered an
// interaction whose work is already recorded: the handler returns it, and
// the fast path discards the transaction and sends nothing, since the
// first delivery was answered.
var ErrReplay = errors.New("interaction: already handled (a replay)")

// Tx returns the fast-path transaction, beginning it on first use. The
// fast path commits it before answering, so rows a handler writes here
// commit together with the work it enqueues, or not at all. A replay —
// this interaction's work is in the ledger already — gets ErrReplay
// before the handler writes anything.
func (in *Interaction) Tx(ctx context.Context) (pgx.Tx, error) {
	if in.replay {
		return nil, ErrReplay
	}
	if in.tx != nil {
		return in.tx, nil
	}
	tx, err := in.fp.o.DB.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("interaction: begin: %w", err)
	}
	done, err := work.Recorded(ctx, tx, in.ID)
	if err != nil || done {
		tx.Rollback(context.WithoutCancel(ctx))
		if err == nil {
			in.replay, err = true, ErrReplay
		}
		return nil, err
	}
	in.tx = tx
	return tx, nil
}

// Enqueue inserts jobs in the fast-path transaction under the idempotency
// key <interaction_id>:<route_version>:<intent>, with the calling guild in
// their metadata. They are held until the answer is sent, so a follow-up
// never overtakes it; a crash after the commit still runs them.
func (in *Interaction) Enqueue(ctx context.Context, intent work.Intent, jobs ...river.InsertManyParams) error {
	tx, err := in.Tx(ctx)
	if err != nil {
		return err
	}
	if in.GuildID != "" {
		for i := range jobs {
			jobs[i].InsertOpts = work.ForGuild(jobs[i].InsertOpts, in.GuildID)
		}
	}
	ids, inserted, err := work.Enqueue(ctx, tx, in.fp.o.Jobs, in.entry(intent), jobs...)
	if err != nil {
		return err
	}
	if !inserted {
		// A concurrent delivery recorded the key first.
		in.replay = true
		return ErrReplay
	}
	in.held = append(in.held, ids...)
	return nil
}

// RequestSync asks, in the fast-path transaction, for target to be brought
// to revision (see work.RequestSync): the handler saves the configuration
// in the same transaction, and requests fold into one pending job.
func (in *Interaction) RequestSync(ctx context.Context, target string, revision int64, args river.JobArgs, opts *river.InsertOpts) error {
	tx, err := in.Tx(ctx)
	if err != nil {
		return err
	}
	if in.GuildID != "" {
		opts = work.ForGuild(opts, in.GuildID)
	}
	id, _, err := work.RequestSync(ctx, tx, in.fp.o.Jobs, target, revision, args, opts)
	if err != nil {
		return err
	}
	inserted, err := work.Record(ctx, tx, in.entry(work.IntentSync), []int64{id})
	if err == nil && !inserted {
		in.replay, err = true, ErrReplay
	}
	return err
}

// entry is the ledger row of this interaction's work of one intent; it
// keeps the token for the follow-ups.
func (in *Interaction) entry(intent work.Intent) work.Entry {
	return work.Entry{Key: work.Key{Event: in.ID, RouteVersion: in.RouteVersion, Intent: intent}, Token: in.Token}
}

// Locales returns the member's and the guild's locale (either may be ""),
// the pair i18n.Catalog.For picks a language from; jobs that answer later
// carry them.
func (in *Interaction) Locales() (user, guild string) { return localesOf(in.Interaction) }

func localesOf(i *discordgo.Interaction) (user, guild string) {
	if i.GuildLocale != nil {
		guild = string(*i.GuildLocale)
	}
	return string(i.Locale), guild
}

// UserID is the id of the member or user who interacted.
func (in *Interaction) UserID() string {
	if in.Member != nil && in.Member.User != nil {
		return in.Member.User.ID
	}
	if in.User != nil {
		return in.User.ID
	}
	return ""
}
