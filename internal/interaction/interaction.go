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
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/herald-bot/herald/internal/i18n"
	"github.com/herald-bot/herald/internal/interaction/customid"
	"github.com/herald-bot/herald/internal/outbox"
	"github.com/herald-bot/herald/internal/synctarget"
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
	CustomID customid.ID
	// RouteVersion is part of the idempotency key: the custom_id's version,
	// 1 for commands.
	RouteVersion int
	Localizer    *i18n.Localizer
	Received     time.Time

	fp      *FastPath
	tx      pgx.Tx
	pending []outbox.Batch // enqueued work, written when the handler returns
	keys    []outbox.Key   // the ledger keys this delivery writes
	held    []int64        // outbox rows to release once the answer is sent
	jobs    int            // jobs enqueued
}

// ErrReplay is returned by RequestSync, and reported by the fast path,
// when Discord delivered an interaction whose work is already recorded:
// the fast path discards what the handler wrote and sends nothing, since
// the first delivery was answered.
var ErrReplay = errors.New("interaction: already handled (a replay)")

// DB is the fast path's own pool, for a handler's reads: job workers
// busy on the job pool never delay an answer.
func (in *Interaction) DB() *pgxpool.Pool { return in.fp.o.DB }

// Tx returns the fast-path transaction, beginning it on first use. The
// fast path commits it before answering, together with the work the
// handler enqueued, or not at all. A replay — the interaction's work is
// in the ledger already — is found when that work is written, and all of
// it is rolled back.
func (in *Interaction) Tx(ctx context.Context) (pgx.Tx, error) {
	if in.tx != nil {
		return in.tx, nil
	}
	tx, err := in.fp.o.DB.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("interaction: begin: %w", err)
	}
	in.tx = tx
	return tx, nil
}

// Enqueue adds jobs to the interaction's work under the idempotency key
// <interaction_id>:<route_version>:<intent>, with the calling guild in
// their metadata. The fast path writes it with the ledger row when the
// handler returns — in one statement when the handler wrote nothing else
// — and releases it to River once the answer is sent, so a follow-up
// never overtakes the answer; a crash after the commit still runs it.
func (in *Interaction) Enqueue(_ context.Context, intent outbox.Intent, jobs ...river.InsertManyParams) error {
	if in.GuildID != "" {
		for i := range jobs {
			jobs[i].InsertOpts = work.ForGuild(jobs[i].InsertOpts, in.GuildID)
		}
	}
	b, err := outbox.NewBatch(in.entry(intent), jobs...)
	if err != nil {
		return err
	}
	in.pending = append(in.pending, b)
	in.keys = append(in.keys, b.Key())
	return nil
}

// write stores the enqueued work: through the group writer, with other
// interactions' in one statement, when the handler has no transaction
// and enqueued one batch; else in the transaction, which the caller
// commits. A key already recorded means a replay.
func (in *Interaction) write(ctx context.Context) error {
	if in.tx == nil && len(in.pending) > 1 {
		if _, err := in.Tx(ctx); err != nil {
			return err
		}
	}
	for _, b := range in.pending {
		var id int64
		var inserted bool
		var err error
		if in.tx != nil {
			id, inserted, err = b.Insert(ctx, in.tx)
		} else {
			id, inserted, err = in.fp.o.Writer.Insert(ctx, b)
		}
		if err != nil {
			return err
		}
		if !inserted {
			return ErrReplay
		}
		in.held = append(in.held, id)
		in.jobs += b.Jobs()
	}
	return nil
}

// RequestSync asks, in the fast-path transaction, for target to be brought
// to revision (see synctarget.Request): the handler saves the configuration
// in the same transaction, and requests fold into one pending job.
func (in *Interaction) RequestSync(ctx context.Context, target string, revision int64, args river.JobArgs, opts *river.InsertOpts) error {
	tx, err := in.Tx(ctx)
	if err != nil {
		return err
	}
	if in.GuildID != "" {
		opts = work.ForGuild(opts, in.GuildID)
	}
	if _, _, err := synctarget.Request(ctx, tx, in.fp.o.Jobs, target, revision, args, opts); err != nil {
		return err
	}
	e := in.entry(outbox.IntentSync)
	in.keys = append(in.keys, e.Key)
	inserted, err := outbox.Record(ctx, tx, e)
	if err == nil && !inserted {
		err = ErrReplay
	}
	return err
}

// entry is the ledger row of this interaction's work of one intent; it
// keeps the token for the follow-ups.
func (in *Interaction) entry(intent outbox.Intent) outbox.Entry {
	return outbox.Entry{Key: outbox.Key{Event: in.ID, RouteVersion: in.RouteVersion, Intent: intent}, Token: in.Token}
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
