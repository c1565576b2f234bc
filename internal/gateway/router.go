package gateway

import (
	"context"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/i18n"
)

// Interaction is what a handler gets: Discord's interaction, its parsed
// custom_id (components and modals), the member's language and when it
// arrived.
type Interaction struct {
	*discordgo.Interaction
	CustomID  CustomID
	Localizer *i18n.Localizer
	Received  time.Time
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
