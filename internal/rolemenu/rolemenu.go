// Package rolemenu is herald's role menus: messages with buttons or a
// select menu that members click to pick their roles, configured by admins
// with /rolemenu.
//
//   - Configuration commands write in the fast path's transaction and
//     answer at once; a change to a published menu bumps its revision and
//     requests a publish (the sync intent: ten edits in a second make one
//     message edit). Adding a role is checked against fresh guild data, so
//     it runs as a job that answers when done.
//   - A click writes the member's intent and requests the member's apply
//     job (sync target rolemenu-member:<guild>:<user>): rapid clicks fold
//     into one job, which reads the member fresh, plans the changes once,
//     re-checks every role, applies only the difference and fills each
//     click's deferred reply.
//   - Custom IDs carry only menu id, option id and route version; the rest
//     is looked up, so published menus keep working across restarts.
package rolemenu

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/herald-bot/herald/commands"
	"github.com/herald-bot/herald/internal/bulk"
	"github.com/herald-bot/herald/internal/clock"
	"github.com/herald-bot/herald/internal/discord/rest"
	"github.com/herald-bot/herald/internal/feature"
	"github.com/herald-bot/herald/internal/followup"
	"github.com/herald-bot/herald/internal/guildroles"
	"github.com/herald-bot/herald/internal/i18n"
	"github.com/herald-bot/herald/internal/interaction"
	"github.com/herald-bot/herald/internal/synctarget"
	"github.com/herald-bot/herald/internal/work"
)

// Custom-ID patterns of published menus.
const (
	pickID   = "rolemenu:1:pick:{menu}:{option}"
	selectID = "rolemenu:1:select:{menu}"
)

// A member may click clickBurst times in clickWindow (the clicks
// coalesce); more is spam, refused. Each herald has its own count.
const (
	clickBurst  = 5
	clickWindow = 10 * time.Second
)

// Feature declares role menus.
func Feature() feature.Feature {
	return feature.Feature{Name: "rolemenu", Commands: commands.RoleMenu, Build: build,
		// Menu messages, bulk progress messages, and the members' roles.
		Permissions: discordgo.PermissionViewChannel | discordgo.PermissionSendMessages | discordgo.PermissionManageRoles}
}

// deps is what the handlers and jobs share.
type deps struct {
	db        *pgxpool.Pool
	discord   *rest.Client
	followups *followup.Sender
	roles     *guildroles.Reader
	catalog   *i18n.Catalog
	log       *slog.Logger
	bulk      *bulk.Actions
	clock     *clock.Clock // temporary roles' due times
	tokenLife time.Duration
	late      *prometheus.CounterVec // lateReplies
}

func build(k feature.Kit) error {
	d := &deps{db: k.DB, discord: k.Discord, followups: k.Followups, roles: k.Roles, catalog: k.Catalog, log: k.Log, bulk: k.Bulk, clock: k.Config.Clock,
		tokenLife: k.Config.TokenLife(), late: lateReplies(k.Metrics)}
	k.Bulk.Kind(bulk.Kind{Name: kindPublishAll, Lane: work.Sync, Permission: discordgo.PermissionManageRoles,
		Plan: d.planPublishAll, Request: d.requestRepublish})
	k.Routes.Route("/rolemenu", func(r *interaction.Mux) {
		r.Use(interaction.GuildOnly, interaction.RequirePermission(discordgo.PermissionManageRoles))
		r.Command("/create", d.create)
		r.Command("/option/add", d.optionAdd)
		r.Command("/option/edit", d.optionEdit)
		r.Command("/option/remove", d.optionRemove)
		r.Command("/set/mode", d.setMode)
		r.Command("/set/picks", d.setPicks)
		r.Command("/set/required-role", d.setRequired)
		r.Command("/set/blocked-role", d.setBlocked)
		r.Command("/set/temporary", d.setTemporary)
		r.Command("/set/link", d.setLink)
		r.Command("/set/dangerous-roles", d.setDangerous)
		r.Command("/publish", d.publish)
		r.Command("/republish", d.republish)
		r.Command("/publish-all", d.publishAll)
		r.Command("/move", d.move)
		r.Command("/delete", d.deleteMenu)
		r.Command("/list", d.list)
		r.Command("/status", followup.Later[statusView])
		// Every autocompleted option of /rolemenu names a menu.
		for _, p := range commands.Completing(commands.RoleMenu(k.Catalog)) {
			r.Autocomplete(strings.TrimPrefix(p, "/rolemenu"), d.autocompleteMenu)
		}
	})
	k.Routes.Group(func(r *interaction.Mux) {
		r.Use(interaction.GuildOnly, interaction.Limit(clickBurst, clickWindow))
		r.Component(pickID, d.click)
		r.Component(selectID, d.click)
	})
	work.Register(k.Jobs, &configWorker{deps: d})
	work.Register(k.Jobs, &clickWorker{deps: d})
	work.Register(k.Jobs, &applyWorker{deps: d})
	p := &publisher{d}
	work.Register(k.Jobs, &synctarget.Worker[publishArgs]{DB: d.db, Publish: func(ctx context.Context, a publishArgs) error {
		return p.publish(ctx, a.MenuID)
	}})
	work.Register(k.Jobs, &expireWorker{deps: d})
	followup.RegisterView[statusView](k.Jobs, k.Followups, k.Catalog, d.statusText)
	work.Register(k.Jobs, &cleanupWorker{deps: d})
	work.Register(k.Jobs, &noticeWorker{deps: d})
	k.Jobs.Periodic(noticeJob(d.tokenLife))
	k.Reports.Add("rolemenu", d.report)
	k.Events.On(d.onMessageDelete)
	k.Events.On(d.onChannelDelete)
	k.Events.OnMember(d.onMember)
	return nil
}
