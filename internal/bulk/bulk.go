// Package bulk carries out an admin's request that fans out into many
// domain tasks — a role to every member who has another, a republish of
// every menu or panel — as one action: one runner job works the tasks in
// order, one progress message names what is done, waiting and failed (a
// coalesced sync target, edited at most once a second), and a Cancel
// button removes what is still pending while finished work stays.
// Progress counts tasks, never HTTP requests, and is always read from the
// tasks' rows.
package bulk

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"

	"github.com/bwmarrin/discordgo"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/herald-bot/herald/internal/discord/rest"
	"github.com/herald-bot/herald/internal/i18n"
	"github.com/herald-bot/herald/internal/interaction"
	"github.com/herald-bot/herald/internal/outbox"
	"github.com/herald-bot/herald/internal/work"
)

// Kind is a bulk action a feature offers. Plan lists the tasks when the
// runner starts; each task is then carried out by Do (Discord calls made
// by the runner) or by Request (a sync the task waits for: done once its
// target shows the revision asked for).
type Kind struct {
	// Name is stored with each action; it must not change once used.
	Name string
	// Lane is where the runner works: events for changes to members,
	// sync for republishing objects.
	Lane work.Lane
	// Permission is what a member needs to cancel (the command's).
	Permission int64
	// Plan lists the tasks; a *Refused error ends the action with its
	// text and nothing done, any other error retries.
	Plan func(ctx context.Context, a Action) ([]Task, error)
	// Do carries out one task; a *Refused error fails it and every task
	// left with its text (the action can no longer go on: its role
	// became one herald may not hand out), without a request to Discord.
	Do      func(ctx context.Context, a Action, t Task) error
	Request func(ctx context.Context, tx pgx.Tx, a Action, t Task) (target string, revision int64, err error)
}

// Action is what a kind's functions get: the action as started.
type Action struct {
	ID        int64
	GuildID   string
	StartedBy string
	Params    json.RawMessage
	// Localizer speaks the guild's language (the progress message's).
	Localizer *i18n.Localizer
}

// Task is one unit of an action: Key is what the kind acts on (a member
// id, a menu name), Name is how the progress message names it.
type Task struct {
	Key  string
	Name string
}

// ErrGone, from Do or Request, fails the task as target_missing: what it
// acts on was deleted since the action was planned.
var ErrGone = errors.New("bulk: the task's target is gone")

// Refused, from Plan or Do, ends an action saying why (Text, in the
// action's language): from Plan before anything is done, from Do with
// the tasks left failed.
type Refused struct{ Text string }

func (r *Refused) Error() string { return "bulk: refused: " + r.Text }

// Actions runs bulk actions: features add their kinds when they are
// built, and start actions from a command's fast path.
type Actions struct {
	db      *pgxpool.Pool
	discord *rest.Client
	catalog *i18n.Catalog
	kinds   map[string]Kind
}

// Deps are what Actions needs from herald.
type Deps struct {
	DB      *pgxpool.Pool
	Discord *rest.Client
	Catalog *i18n.Catalog
	Routes  *interaction.Mux
	Jobs    *work.Registry
}

// New returns Actions with the runner, progress and cancel routes
// registered.
func New(d Deps) *Actions {
	a := &Actions{db: d.DB, discord: d.Discord, catalog: d.Catalog, kinds: map[string]Kind{}}
	work.Register(d.Jobs, &runner{a: a})
	work.Register(d.Jobs, &progressWorker{a: a})
	d.Routes.Group(func(r *interaction.Mux) {
		r.Use(interaction.GuildOnly)
		r.Component(cancelID, a.cancel)
	})
	return a
}

var kindName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,39}$`)

// Kind adds a kind; a bad or repeated one panics, as it is a wiring bug.
func (a *Actions) Kind(k Kind) {
	switch {
	case !kindName.MatchString(k.Name):
		panic(fmt.Sprintf("bulk: kind name %q: want lower-case letters, digits and _", k.Name))
	case a.kinds[k.Name].Name != "":
		panic(fmt.Sprintf("bulk: kind %q added twice", k.Name))
	case k.Plan == nil || (k.Do == nil) == (k.Request == nil):
		panic(fmt.Sprintf("bulk: kind %q needs Plan and exactly one of Do and Request", k.Name))
	}
	a.kinds[k.Name] = k
}

// Start records an action of kind in the interaction's transaction, with
// its runner and its progress message (posted in the channel the command
// was used in, since a bulk action may outlive the interaction's token),
// and returns the ephemeral answer. The locale key title (with vars)
// heads the progress message, in the guild's language.
func (a *Actions) Start(ctx context.Context, in *interaction.Interaction, kind, title string, vars map[string]any, params any) (*discordgo.InteractionResponse, error) {
	k, ok := a.kinds[kind]
	if !ok {
		return nil, fmt.Errorf("bulk: no kind %q", kind)
	}
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("bulk: params: %w", err)
	}
	user, guild := in.Locales()
	locale := cmp.Or(guild, user)
	heading := a.catalog.For("", locale).T(title, vars)
	tx, err := in.Tx(ctx)
	if err != nil {
		return nil, err
	}
	var id int64
	if err := tx.QueryRow(ctx, `INSERT INTO bulk_actions (guild_id, kind, params, title, locale, channel_id, started_by)
		VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`, in.GuildID, kind, raw, heading, locale, in.ChannelID, in.UserID()).Scan(&id); err != nil {
		return nil, fmt.Errorf("bulk: start: %w", err)
	}
	if err := in.Enqueue(ctx, outbox.IntentEvent, river.InsertManyParams{Args: runArgs{ActionID: id},
		InsertOpts: &river.InsertOpts{Queue: string(k.Lane)}}); err != nil {
		return nil, err
	}
	if err := in.RequestSync(ctx, progressTarget(id), 1, progressArgs{ActionID: id}, progressOpts()); err != nil {
		return nil, err
	}
	return interaction.Ephemeral(in.Localizer.T("bulk.started", map[string]any{"Title": in.Localizer.T(title, vars)})), nil
}
