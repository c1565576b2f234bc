// Package roles is /roles bulk add|remove role: members-with:, which
// gives a role to (or takes it from) every member who has another, as a
// bulk action: listed once, carried out member by member within
// Discord's member-role limit, shown as one progress message with a
// Cancel button.
package roles

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/commands"
	"github.com/herald-bot/herald/internal/bulk"
	"github.com/herald-bot/herald/internal/discord/intents"
	"github.com/herald-bot/herald/internal/discord/rest"
	"github.com/herald-bot/herald/internal/discord/transport"
	"github.com/herald-bot/herald/internal/feature"
	"github.com/herald-bot/herald/internal/guildroles"
	"github.com/herald-bot/herald/internal/interaction"
	"github.com/herald-bot/herald/internal/work"
)

// Feature declares /roles.
func Feature() feature.Feature {
	return feature.Feature{Name: "roles", Commands: commands.Roles, Build: build,
		Needs: []feature.Need{{Intent: intents.ServerMembers, Without: "roles.needs.member_lists"}},
		// The members' roles, and the bulk action's progress message.
		Permissions: discordgo.PermissionManageRoles | discordgo.PermissionViewChannel | discordgo.PermissionSendMessages}
}

// Kinds of bulk action, as stored with each action.
const (
	kindAdd    = "roles_add"
	kindRemove = "roles_remove"
)

// params is what an action was started with. AllowDangerous is the
// server owner's consent to hand out a role with dangerous permissions
// in this one action (role menus ask it once per server, with
// /rolemenu set dangerous-roles; a bulk action is one deliberate act, so
// it asks the act).
type params struct {
	RoleID         string `json:"role_id"`
	WithRoleID     string `json:"with_role_id"`
	AllowDangerous bool   `json:"allow_dangerous,omitempty"`
}

type deps struct {
	discord *rest.Client
	roles   *guildroles.Reader
}

func build(k feature.Kit) error {
	d := &deps{discord: k.Discord, roles: k.Roles}
	for _, kind := range []string{kindAdd, kindRemove} {
		k.Bulk.Kind(bulk.Kind{Name: kind, Lane: work.Events, Permission: discordgo.PermissionManageRoles,
			Plan: d.planner(kind == kindAdd), Do: d.doer(kind == kindAdd)})
	}
	k.Routes.Route("/roles/bulk", func(r *interaction.Mux) {
		r.Use(interaction.GuildOnly, interaction.RequirePermission(discordgo.PermissionManageRoles))
		members := intents.ServerMembers.EnabledBy(k.Application.Flags)
		r.Command("/add", start(k.Bulk, members, kindAdd, "roles.bulk.title_add"))
		r.Command("/remove", start(k.Bulk, members, kindRemove, "roles.bulk.title_remove"))
	})
	return nil
}

// start is the fast path of /roles bulk add|remove: it records the
// action; the runner lists the members and checks the role with fresh
// data. Discord lists a server's members only to applications with the
// Server Members intent: without it, the admin is told so at once.
func start(b *bulk.Actions, members bool, kind, title string) interaction.Handler {
	return func(ctx context.Context, in *interaction.Interaction) (*discordgo.InteractionResponse, error) {
		if !members {
			return interaction.Ephemeral(in.Localizer.T("roles.bulk.needs_members", map[string]any{"Intent": intents.ServerMembers.Name})), nil
		}
		o := in.Options()
		p := params{RoleID: o.String("role"), WithRoleID: o.String("members-with")}
		p.AllowDangerous, _ = o.Bool("allow-dangerous")
		vars := map[string]any{"Role": "<@&" + p.RoleID + ">", "With": "<@&" + p.WithRoleID + ">"}
		return b.Start(ctx, in, kind, title, vars, p)
	}
}

// check says whether the action may still hand out (or take away) its
// role, as the action's language words it ("" when it may). It runs when
// the members are listed and again before every member's change, with
// data no older than guildroles' window — a run can last hours: the role
// must still exist, not be managed, sit below herald's highest role and
// below the highest role the admin who started the action has now (a
// demoted admin's action stops; the owner outranks every role), and
// carry no dangerous permission unless the owner started the action
// with allow-dangerous. Taking a dangerous role away is held to the same
// rule, as menus hold it: stripping @Moderators from every moderator
// hurts a server too. A change Discord would refuse is thus never sent,
// and the invalid requests Discord counts against herald are not spent.
func (d *deps) check(ctx context.Context, a bulk.Action, p params) (string, error) {
	snap, err := d.roles.Get(ctx, a.GuildID)
	if err != nil {
		return "", err
	}
	if p.AllowDangerous && a.StartedBy != snap.OwnerID {
		return a.Localizer.T("roles.bulk.owner_only", nil), nil
	}
	var actorRoles []string
	if a.StartedBy != snap.OwnerID {
		m, err := d.roles.Member(ctx, a.GuildID, a.StartedBy)
		var api *transport.APIError
		switch {
		case errors.As(err, &api) && api.Class() == transport.NotFound: // they left: no role is below them
		case err != nil:
			return "", err
		default:
			actorRoles = m.Roles
		}
	}
	why := snap.Check(p.RoleID, a.StartedBy, actorRoles, p.AllowDangerous)
	switch {
	case why == nil:
		return "", nil
	case why.Key == "dangerous":
		return a.Localizer.T("roles.bulk.dangerous", map[string]any{"Role": "**" + why.Role + "**", "Perm": why.Perm}), nil
	case why.Key == "above_you": // the progress message speaks to the channel, not to the admin
		return a.Localizer.T("roles.bulk.above_starter", map[string]any{"Role": "**" + why.Role + "**", "User": "<@" + a.StartedBy + ">"}), nil
	}
	return why.Text(a.Localizer), nil
}

// planner lists the members who have the members-with role and lack
// (add) or have (remove) the role, after checking the action may go on.
func (d *deps) planner(add bool) func(ctx context.Context, a bulk.Action) ([]bulk.Task, error) {
	return func(ctx context.Context, a bulk.Action) ([]bulk.Task, error) {
		var p params
		if err := json.Unmarshal(a.Params, &p); err != nil {
			return nil, &bulk.Refused{Text: a.Localizer.T("interaction.failed", nil)}
		}
		why, err := d.check(ctx, a, p)
		if err != nil {
			return nil, err
		}
		if why != "" {
			return nil, &bulk.Refused{Text: why}
		}
		snap, err := d.roles.Get(ctx, a.GuildID)
		if err != nil {
			return nil, err
		}
		if snap.Roles[p.WithRoleID] == nil {
			return nil, &bulk.Refused{Text: a.Localizer.T("role.refused.deleted", map[string]any{"Role": "<@&" + p.WithRoleID + ">"})}
		}
		var tasks []bulk.Task
		for m, err := range d.discord.AllMembers(ctx, a.GuildID) {
			if err != nil {
				return nil, fmt.Errorf("roles: list members: %w", err)
			}
			if m.User == nil || !slices.Contains(m.Roles, p.WithRoleID) || slices.Contains(m.Roles, p.RoleID) == add {
				continue
			}
			tasks = append(tasks, bulk.Task{Key: m.User.ID, Name: displayName(m)})
		}
		if len(tasks) == 0 {
			return nil, &bulk.Refused{Text: a.Localizer.T("roles.bulk.nobody", map[string]any{"Role": "<@&" + p.RoleID + ">", "With": "<@&" + p.WithRoleID + ">"})}
		}
		return tasks, nil
	}
}

// doer checks the action may still go on, then changes one member's
// role; the audit log names who asked.
func (d *deps) doer(add bool) func(ctx context.Context, a bulk.Action, t bulk.Task) error {
	return func(ctx context.Context, a bulk.Action, t bulk.Task) error {
		var p params
		if err := json.Unmarshal(a.Params, &p); err != nil {
			return fmt.Errorf("roles: params: %w", err)
		}
		why, err := d.check(ctx, a, p)
		if err != nil {
			return err
		}
		if why != "" {
			return &bulk.Refused{Text: why}
		}
		reason := fmt.Sprintf("bulk action %d by %s", a.ID, a.StartedBy)
		if add {
			return d.discord.AddMemberRole(ctx, a.GuildID, t.Key, p.RoleID, reason)
		}
		return d.discord.RemoveMemberRole(ctx, a.GuildID, t.Key, p.RoleID, reason)
	}
}

// displayName is how the server shows the member.
func displayName(m *discordgo.Member) string {
	switch {
	case m.Nick != "":
		return m.Nick
	case m.User.GlobalName != "":
		return m.User.GlobalName
	}
	return m.User.Username
}
