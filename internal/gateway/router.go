package gateway

import (
	"context"
	"fmt"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/herald-bot/herald/internal/i18n"
	"github.com/herald-bot/herald/internal/work"
)

// Interaction is what a handler gets: Discord's interaction, its parsed
// custom_id (components and modals), the member's language and when it
// arrived.
type Interaction struct {
	*discordgo.Interaction
	CustomID  CustomID
	Localizer *i18n.Localizer
	Received  time.Time

	db     *pgxpool.Pool
	jobs   *work.Client
	tx     pgx.Tx  // begun by the first Enqueue
	held   []int64 // jobs to release once the answer is sent
	replay bool    // a key was already in the ledger
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

// Enqueue inserts jobs for this interaction under the idempotency key
// <interaction_id>:<routeVersion>:<intent>, in one transaction with the
// ledger row; the fast path commits it before answering and releases the
// jobs after. A key already in the ledger — Discord delivered the
// interaction again — inserts nothing.
func (in *Interaction) Enqueue(ctx context.Context, routeVersion int, intent work.Intent, jobs ...river.InsertManyParams) error {
	if in.tx == nil {
		tx, err := in.db.Begin(ctx)
		if err != nil {
			return fmt.Errorf("gateway: begin: %w", err)
		}
		in.tx = tx
	}
	ids, inserted, err := work.Enqueue(ctx, in.tx, in.jobs, work.Key{Event: in.ID, RouteVersion: routeVersion, Intent: intent}, jobs...)
	if err != nil {
		return err
	}
	in.replay = in.replay || !inserted
	in.held = append(in.held, ids...)
	return nil
}

// Handler answers an interaction on the fast path: it may validate and
// enqueue work, and returns the initial response (usually deferred). It
// must not call Discord; the response is sent for it.
type Handler func(ctx context.Context, in *Interaction) (*discordgo.InteractionResponse, error)

// Router sends each interaction to the handler for its command name, or
// for its custom_id's feature and route version.
type Router struct {
	commands map[string]Handler
	controls map[control]Handler
}

type control struct {
	feature string
	version int
}

// NewRouter returns a router with no routes: every interaction is
// answered as outdated until features register theirs.
func NewRouter() *Router {
	return &Router{commands: map[string]Handler{}, controls: map[control]Handler{}}
}

// Command routes an application command by its name.
func (r *Router) Command(name string, h Handler) { r.commands[name] = h }

// Control routes components and modals whose custom_id names feature and
// version. A feature that changes its payload registers the new version
// and drops the old, whose controls are then answered as outdated.
func (r *Router) Control(feature string, version int, h Handler) {
	r.controls[control{feature, version}] = h
}

// route finds the handler for i; ok is false for an unknown command, an
// unparsable custom_id or a retired version.
func (r *Router) route(i *discordgo.Interaction) (h Handler, id CustomID, ok bool) {
	switch i.Type {
	case discordgo.InteractionApplicationCommand:
		h, ok = r.commands[i.ApplicationCommandData().Name]
		return h, CustomID{}, ok
	case discordgo.InteractionMessageComponent, discordgo.InteractionModalSubmit:
		raw := ""
		if i.Type == discordgo.InteractionMessageComponent {
			raw = i.MessageComponentData().CustomID
		} else {
			raw = i.ModalSubmitData().CustomID
		}
		id, err := ParseCustomID(raw)
		if err != nil {
			return nil, CustomID{}, false
		}
		h, ok = r.controls[control{id.Feature, id.Version}]
		return h, id, ok
	default:
		return nil, CustomID{}, false
	}
}
