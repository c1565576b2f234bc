package rolemenu

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/bwmarrin/discordgo"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/herald-bot/herald/internal/followup"
	"github.com/herald-bot/herald/internal/i18n"
	"github.com/herald-bot/herald/internal/interaction"
	"github.com/herald-bot/herald/internal/rolemenu/input"
	"github.com/herald-bot/herald/internal/synctarget"
	"github.com/herald-bot/herald/internal/work"
)

// configArgs is a configuration change that needs fresh guild data — the
// role hierarchy, the server owner — before it may be saved: adding a
// role to a menu, allowing dangerous roles. The admin's reply is deferred
// and filled when it is done.
type configArgs struct {
	Op      string `json:"op"` // option_add or dangerous
	GuildID string `json:"guild_id"`
	followup.Reply
	ActorID     string   `json:"actor_id"`
	ActorRoles  []string `json:"actor_roles"`
	Menu        string   `json:"menu,omitempty"`
	RoleID      string   `json:"role_id,omitempty"`
	Label       string   `json:"label,omitempty"`
	Emoji       string   `json:"emoji,omitempty"`
	Description string   `json:"description,omitempty"`
	Allow       bool     `json:"allow,omitempty"`
}

func (configArgs) Kind() string { return "rolemenu_config" }

// enqueueConfig defers the admin's answer to a configArgs job.
func (d *deps) enqueueConfig(ctx context.Context, in *interaction.Interaction, a configArgs) (*discordgo.InteractionResponse, error) {
	a.GuildID, a.Reply, a.ActorID, a.ActorRoles = in.GuildID, followup.ReplyTo(in), in.UserID(), in.Member.Roles
	return followup.Defer(ctx, in, work.Interactive, a)
}

// optionAdd validates what the payload allows at once and leaves the role
// checks to the job.
func (d *deps) optionAdd(ctx context.Context, in *interaction.Interaction) (*discordgo.InteractionResponse, error) {
	o := in.Options()
	if _, ok := input.ParseEmoji(o.String("emoji")); !ok {
		return say(in, "bad_emoji", map[string]any{"Emoji": o.String("emoji")}), nil
	}
	label, desc := strings.TrimSpace(o.String("label")), strings.TrimSpace(o.String("description"))
	if r := badText(in, label, desc); r != nil {
		return r, nil
	}
	// Without a label the button shows the role's name, cut to fit when
	// the menu is rendered.
	if label == "" {
		if r, ok := o.Role("role"); ok {
			label = r.Name
		}
	}
	return d.enqueueConfig(ctx, in, configArgs{Op: "option_add", Menu: o.String("menu"), RoleID: o.String("role"),
		Label: label, Emoji: o.String("emoji"), Description: desc})
}

func (d *deps) setDangerous(ctx context.Context, in *interaction.Interaction) (*discordgo.InteractionResponse, error) {
	allow, _ := in.Options().Bool("allow")
	return d.enqueueConfig(ctx, in, configArgs{Op: "dangerous", Allow: allow})
}

type configWorker struct {
	river.WorkerDefaults[configArgs]
	*deps
}

func (w *configWorker) Work(ctx context.Context, j *river.Job[configArgs]) error {
	a := j.Args
	loc := a.In(w.catalog)
	var text string
	var err error
	switch a.Op {
	case "option_add":
		text, err = w.addOption(ctx, loc, a)
	case "dangerous":
		text, err = w.allowDangerous(ctx, loc, a)
	default:
		return river.JobCancel(fmt.Errorf("%s: unknown op %q", work.ReasonInvalid, a.Op))
	}
	if err != nil {
		return err
	}
	return a.Answer(ctx, w.followups, work.Interactive, j.ID, text)
}

// snapshot reads the guild's roles and whether its owner allowed
// dangerous roles.
func (d *deps) snapshot(ctx context.Context, guildID string) (*guildRoles, error) {
	snap, err := d.roles.Get(ctx, guildID)
	if err != nil {
		return nil, err
	}
	g := &guildRoles{Snapshot: snap}
	err = d.db.QueryRow(ctx, `SELECT allow_dangerous FROM rolemenu_guilds WHERE guild_id = $1`, guildID).Scan(&g.allowDangerous)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("rolemenu: guild settings: %w", err)
	}
	return g, nil
}

// addOption checks the role with fresh data and adds it to the menu.
func (w *configWorker) addOption(ctx context.Context, loc *i18n.Localizer, a configArgs) (string, error) {
	g, err := w.snapshot(ctx, a.GuildID)
	if err != nil {
		return "", err
	}
	if r := g.checkRole(a.RoleID, a.ActorID, a.ActorRoles); r != nil {
		return r.Text(loc) + " " + loc.T("rolemenu.unchanged_config", nil), nil
	}
	tx, err := w.db.Begin(ctx)
	if err != nil {
		return "", err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	m, err := lockMenu(ctx, tx, a.GuildID, a.Menu)
	if errors.Is(err, errNoMenu) {
		return loc.T("rolemenu.no_menu", map[string]any{"Name": a.Menu}), nil
	}
	if err != nil {
		return "", err
	}
	vars := map[string]any{"Name": m.Name, "Role": roleMention(a.RoleID)}
	if _, ok := m.optionFor(a.RoleID); ok {
		return loc.T("rolemenu.option_exists", vars), nil
	}
	if len(m.Options) >= maxOptions {
		return loc.T("rolemenu.full", vars), nil
	}
	label := a.Label
	if label == "" {
		label = g.Roles[a.RoleID].Name
	}
	if _, err := tx.Exec(ctx, `INSERT INTO rolemenu_options (menu_id, role_id, label, emoji, description, position)
		VALUES ($1, $2, $3, $4, $5, (SELECT COALESCE(max(position), 0) + 1 FROM rolemenu_options WHERE menu_id = $1))`,
		m.ID, a.RoleID, label, a.Emoji, a.Description); err != nil {
		return "", fmt.Errorf("rolemenu: add option: %w", err)
	}
	if err := bump(ctx, tx, m); err != nil {
		return "", err
	}
	if m.State == StateActive {
		client := river.ClientFromContext[pgx.Tx](ctx)
		if _, _, err := synctarget.Request(ctx, tx, client, m.target(), m.Revision, publishArgs{MenuID: m.ID},
			work.ForGuild(publishOpts(), a.GuildID)); err != nil {
			return "", err
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return "", err
	}
	return loc.T("rolemenu.option_added", vars), nil
}

// allowDangerous is the server owner's switch.
func (w *configWorker) allowDangerous(ctx context.Context, loc *i18n.Localizer, a configArgs) (string, error) {
	snap, err := w.roles.Get(ctx, a.GuildID)
	if err != nil {
		return "", err
	}
	if a.ActorID != snap.OwnerID {
		return loc.T("rolemenu.owner_only", nil), nil
	}
	if _, err := w.db.Exec(ctx, `INSERT INTO rolemenu_guilds (guild_id, allow_dangerous) VALUES ($1, $2)
		ON CONFLICT (guild_id) DO UPDATE SET allow_dangerous = EXCLUDED.allow_dangerous`, a.GuildID, a.Allow); err != nil {
		return "", fmt.Errorf("rolemenu: guild settings: %w", err)
	}
	if a.Allow {
		return loc.T("rolemenu.dangerous_allowed", nil), nil
	}
	return loc.T("rolemenu.dangerous_refused", nil), nil
}
