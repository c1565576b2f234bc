// Package tickets is herald's support tickets: a panel with an "Open
// ticket" button (one per topic), a private thread or channel per ticket
// shared by its opener and the support role, staff commands inside it,
// and a close that keeps a transcript.
//
//   - /tickets configures a guild and publishes panels; a panel is kept in
//     sync with its saved revision (the sync intent, as role menus are).
//   - A click on a panel takes the member's lock, checks their open-ticket
//     limit and cooldown and records the ticket in the fast path's
//     transaction, so a double click or a replay opens exactly one
//     ticket; the open job creates the thread or channel (overflow
//     categories past Discord's 50 per category), posts the welcome
//     message and fills the member's deferred reply with a link.
//   - Every message herald posts in a ticket is an event job with a nonce
//     of its own, never merged, never posted twice.
//   - Closing is a durable event job of resumable steps (closing message,
//     transcript, upload, DM, archive or delete); each step's checkpoint
//     is committed with its result, so a restart resumes where it stopped.
//   - In thread mode staff see a ticket's private thread only once added:
//     each ticket is announced in the notify (or log) channel with a
//     "Join ticket" button for the support role.
//   - A panel may ask up to 5 questions first (an intake form, a modal);
//     the answers open the ticket and show in its welcome.
//   - Auto-close (inactivity, opener left) runs as scheduled jobs that
//     warn first and survive restarts.
//
// Custom IDs carry only ids; everything else is looked up, so panels and
// ticket buttons keep working across restarts.
package tickets

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/herald-bot/herald/commands"
	"github.com/herald-bot/herald/internal/bulk"
	"github.com/herald-bot/herald/internal/config"
	"github.com/herald-bot/herald/internal/discord/intents"
	"github.com/herald-bot/herald/internal/discord/rest"
	"github.com/herald-bot/herald/internal/feature"
	"github.com/herald-bot/herald/internal/followup"
	"github.com/herald-bot/herald/internal/i18n"
	"github.com/herald-bot/herald/internal/interaction"
	"github.com/herald-bot/herald/internal/synctarget"
	"github.com/herald-bot/herald/internal/work"
)

// Custom-ID patterns of panels and of the buttons in a ticket.
const (
	openID    = "tickets:1:open:{panel}:{topic}"
	closeID   = "tickets:1:close:{ticket}"
	claimID   = "tickets:1:claim:{ticket}"
	confirmID = "tickets:1:confirm:{ticket}"
)

// Button spam beyond clickBurst in clickWindow is refused before it
// reaches Postgres; the real guard against duplicate tickets is the
// member's lock. Each herald has its own count.
const (
	clickBurst  = 5
	clickWindow = 10 * time.Second
)

// grace is how long a warned ticket waits before auto-close, and how long
// a close request waits for the opener.
var grace = config.Var[time.Duration]{
	Setting: config.Setting{Key: "HERALD_TICKETS_GRACE", Default: "1h",
		Help: "how long tickets wait after an auto-close warning or a close request before they close"},
	Parse: func(v string) (time.Duration, error) {
		d, err := time.ParseDuration(v)
		if err != nil || d < time.Second || d > 7*24*time.Hour {
			return 0, fmt.Errorf("must be a duration from 1s to 168h, got %q", v)
		}
		return d, nil
	},
}

// Feature declares tickets.
func Feature() feature.Feature {
	return feature.Feature{Name: "tickets", Commands: commands.Tickets, Settings: []config.Declared{grace}, Build: build,
		Needs: []feature.Need{
			{Intent: intents.ServerMembers, Without: "tickets.needs.opener_left"},
			{Intent: intents.MessageContent, Without: "tickets.needs.transcripts"},
		},
		// Channels and overwrites (channel mode; Manage Roles edits
		// overwrites), private threads and their members, messages with
		// embeds and transcript files, history for transcripts.
		Permissions: discordgo.PermissionManageChannels | discordgo.PermissionManageRoles | discordgo.PermissionViewChannel |
			discordgo.PermissionSendMessages | discordgo.PermissionEmbedLinks | discordgo.PermissionAttachFiles |
			discordgo.PermissionReadMessageHistory | discordgo.PermissionManageThreads | discordgo.PermissionCreatePrivateThreads |
			discordgo.PermissionSendMessagesInThreads,
	}
}

// deps is what the handlers and jobs share.
type deps struct {
	db        *pgxpool.Pool
	discord   *rest.Client
	followups *followup.Sender
	catalog   *i18n.Catalog
	log       *slog.Logger
	botID     string
	grace     time.Duration
	bulk      *bulk.Actions
	// contentIntent: Discord gives herald the text of members' messages
	// (the application has the Message Content intent).
	contentIntent bool
}

func build(k feature.Kit) error {
	d := &deps{db: k.DB, discord: k.Discord, followups: k.Followups, catalog: k.Catalog, log: k.Log, botID: k.Application.BotUserID, bulk: k.Bulk,
		contentIntent: intents.MessageContent.EnabledBy(k.Application.Flags)}
	k.Bulk.Kind(bulk.Kind{Name: kindPanelsRepublish, Lane: work.Sync, Permission: discordgo.PermissionManageGuild,
		Plan: d.planPanels, Request: d.requestPanel})
	k.Reports.Add("tickets", d.report)
	d.grace = grace.Get(k.Config)
	k.Routes.Route("/tickets", func(r *interaction.Mux) {
		r.Use(interaction.GuildOnly, interaction.RequirePermission(discordgo.PermissionManageGuild))
		r.Command("/setup", d.setup)
		r.Command("/settings", d.settings)
		r.Command("/panel", d.panel)
		r.Command("/topic/add", d.topicAdd)
		r.Command("/topic/remove", d.topicRemove)
		r.Command("/form", d.form)
		r.Command("/stats", followup.Later[statsView])
		r.Command("/panels/republish", d.panelsRepublish)
		r.Autocomplete("/form", d.autocompletePanel)
		r.Autocomplete("/topic/add", d.autocompletePanel)
		r.Autocomplete("/topic/remove", d.autocompletePanel)
	})
	k.Routes.Route("/ticket", func(r *interaction.Mux) {
		r.Use(interaction.GuildOnly)
		r.Command("/close", d.closeCommand)
		r.Command("/close-request", d.closeRequest)
		r.Command("/claim", d.claim)
		r.Command("/unclaim", d.unclaim)
		r.Command("/add", d.addMember)
		r.Command("/remove", d.removeMember)
		r.Command("/transfer", d.transfer)
		r.Command("/rename", d.rename)
		r.Command("/transcript", d.transcript)
		r.Command("/reopen", d.reopen)
		r.Command("/info", d.info)
	})
	k.Routes.Group(func(r *interaction.Mux) {
		r.Use(interaction.GuildOnly, interaction.Limit(clickBurst, clickWindow))
		r.Component(openID, d.open)
		r.Component(closeID, d.closeButton)
		r.Component(claimID, d.claimButton)
		r.Component(confirmID, d.confirmClose)
		r.Component(joinID, d.join)
		r.Modal(formID, d.openForm)
	})
	pp := &panelPublisher{d}
	work.Register(k.Jobs, &synctarget.Worker[panelArgs]{DB: d.db, Publish: func(ctx context.Context, a panelArgs) error {
		return pp.publish(ctx, a.PanelID)
	}})
	work.Register(k.Jobs, &openWorker{deps: d})
	work.Register(k.Jobs, &actionWorker{deps: d})
	work.Register(k.Jobs, &joinWorker{deps: d})
	work.Register(k.Jobs, &closeWorker{deps: d})
	work.Register(k.Jobs, &transcriptWorker{deps: d})
	work.Register(k.Jobs, &autoCloseWorker{deps: d})
	followup.RegisterView[statsView](k.Jobs, k.Followups, k.Catalog, d.statsText)
	work.Register(k.Jobs, &sweepWorker{deps: d})
	k.Jobs.Periodic(sweepJob())
	k.Events.On(d.onMessageCreate)
	k.Events.On(d.onMemberRemove)
	k.Events.On(d.onChannelDelete)
	k.Events.On(d.onThreadDelete)
	k.Events.On(d.onMessageDelete)
	return nil
}
