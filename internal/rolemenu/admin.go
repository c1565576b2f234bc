package rolemenu

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/herald-bot/herald/internal/interaction"
	"github.com/herald-bot/herald/internal/outbox"
	"github.com/herald-bot/herald/internal/rolemenu/input"
	"github.com/herald-bot/herald/internal/work"
)

// say answers the admin, ephemeral, in their language.
func say(in *interaction.Interaction, key string, vars map[string]any) *discordgo.InteractionResponse {
	return interaction.Ephemeral(in.Localizer.T("rolemenu."+key, vars))
}

func roleMention(id string) string    { return "<@&" + id + ">" }
func channelMention(id string) string { return "<#" + id + ">" }

// create makes a menu: a draft until published.
func (d *deps) create(ctx context.Context, in *interaction.Interaction) (*discordgo.InteractionResponse, error) {
	o := in.Options()
	name := strings.TrimSpace(o.String("name"))
	if name == "" || utf8.RuneCountInString(name) > 50 {
		return say(in, "bad_name", nil), nil
	}
	description := strings.TrimSpace(o.String("description"))
	if n := utf8.RuneCountInString(description); n > maxMenuText {
		return say(in, "bad_menu_description", map[string]any{"Max": maxMenuText, "Count": n}), nil
	}
	style, mode := cmp.Or(Style(o.String("style")), StyleButtons), cmp.Or(Mode(o.String("mode")), ModeToggle)
	if !slices.Contains(styles, style) {
		return badChoice(in, style, styles), nil
	}
	if !slices.Contains(modes, mode) {
		return badChoice(in, mode, modes), nil
	}
	var id int64
	err := in.DB().QueryRow(ctx, `INSERT INTO rolemenus (guild_id, name, style, mode, description) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (guild_id, name) DO NOTHING RETURNING id`, in.GuildID, name, style, mode, description).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return say(in, "exists", map[string]any{"Name": name}), nil
	}
	if err != nil {
		return nil, fmt.Errorf("rolemenu: create %s: %w", name, err)
	}
	return say(in, "created", map[string]any{"Name": name, "Style": style, "Mode": mode}), nil
}

// badText refuses an option's label or description that Discord would
// not show, naming the limit; nil when both fit. The command declares
// these lengths, so only a client with an outdated command list, or a
// forged request, sends longer ones: refused, rather than cut to
// something the admin did not write.
func badText(in *interaction.Interaction, label, description string) *discordgo.InteractionResponse {
	if n := utf8.RuneCountInString(label); n > maxButtonLabel {
		return say(in, "bad_label", map[string]any{"Max": maxButtonLabel, "Count": n})
	}
	if n := utf8.RuneCountInString(description); n > maxDescription {
		return say(in, "bad_description", map[string]any{"Max": maxDescription, "Count": n})
	}
	return nil
}

// badChoice refuses a value that is not one of allowed, naming them.
func badChoice[T ~string](in *interaction.Interaction, value T, allowed []T) *discordgo.InteractionResponse {
	names := make([]string, len(allowed))
	for i, a := range allowed {
		names[i] = string(a)
	}
	return say(in, "bad_choice", map[string]any{"Value": value, "Allowed": "`" + strings.Join(names, "`, `") + "`"})
}

// change runs fn on the locked menu named by the option "menu" and, when
// fn changed it, saves a new revision and requests its publish if the
// menu is on Discord. fn's answer is the admin's.
func (d *deps) change(ctx context.Context, in *interaction.Interaction, fn func(tx pgx.Tx, m *menu) (resp *discordgo.InteractionResponse, changed bool, err error)) (*discordgo.InteractionResponse, error) {
	tx, err := in.Tx(ctx)
	if err != nil {
		return nil, err
	}
	name := in.Options().String("menu")
	m, err := lockMenu(ctx, tx, in.GuildID, name)
	if errors.Is(err, errNoMenu) {
		return say(in, "no_menu", map[string]any{"Name": name}), nil
	}
	if err != nil {
		return nil, err
	}
	resp, changed, err := fn(tx, m)
	if err != nil || !changed {
		return resp, err
	}
	if err := bump(ctx, tx, m); err != nil {
		return nil, err
	}
	if m.State == StateActive {
		if err := d.requestPublish(ctx, in, m); err != nil {
			return nil, err
		}
	}
	return resp, nil
}

// requestPublish asks for m's newest revision to be made visible.
func (d *deps) requestPublish(ctx context.Context, in *interaction.Interaction, m *menu) error {
	return in.RequestSync(ctx, m.target(), m.Revision, publishArgs{MenuID: m.ID}, publishOpts())
}

// publishDelay lets an admin's quick succession of edits fold into one
// publish: requests within it join the job already waiting, which then
// publishes the newest revision — ten edits in a second, one message edit.
const publishDelay = time.Second

func publishOpts() *river.InsertOpts {
	return &river.InsertOpts{Queue: string(work.Sync), ScheduledAt: time.Now().Add(publishDelay)}
}

func (d *deps) optionEdit(ctx context.Context, in *interaction.Interaction) (*discordgo.InteractionResponse, error) {
	return d.change(ctx, in, func(tx pgx.Tx, m *menu) (*discordgo.InteractionResponse, bool, error) {
		o := in.Options()
		roleID := o.String("role")
		vars := map[string]any{"Name": m.Name, "Role": roleMention(roleID)}
		opt, ok := m.optionFor(roleID)
		if !ok {
			return say(in, "no_option", vars), false, nil
		}
		label, desc := strings.TrimSpace(o.String("label")), strings.TrimSpace(o.String("description"))
		if r := badText(in, label, desc); r != nil {
			return r, false, nil
		}
		label, emoji, desc := cmp.Or(label, opt.Label), cmp.Or(o.String("emoji"), opt.Emoji), cmp.Or(desc, opt.Description)
		if _, ok := input.ParseEmoji(emoji); !ok {
			return say(in, "bad_emoji", map[string]any{"Emoji": emoji}), false, nil
		}
		if _, err := tx.Exec(ctx, `UPDATE rolemenu_options SET label = $2, emoji = $3, description = $4 WHERE id = $1`, opt.ID, label, emoji, desc); err != nil {
			return nil, false, err
		}
		return say(in, "option_edited", vars), true, nil
	})
}

func (d *deps) optionRemove(ctx context.Context, in *interaction.Interaction) (*discordgo.InteractionResponse, error) {
	return d.change(ctx, in, func(tx pgx.Tx, m *menu) (*discordgo.InteractionResponse, bool, error) {
		roleID := in.Options().String("role")
		vars := map[string]any{"Name": m.Name, "Role": roleMention(roleID)}
		opt, ok := m.optionFor(roleID)
		if !ok {
			return say(in, "no_option", vars), false, nil
		}
		if _, err := tx.Exec(ctx, `DELETE FROM rolemenu_options WHERE id = $1`, opt.ID); err != nil {
			return nil, false, err
		}
		if len(m.Options) == 1 && m.State == StateActive {
			// Nothing left to show: the message stays as it was (see
			// publish), and the admin learns why.
			return say(in, "option_removed_last", vars), true, nil
		}
		return say(in, "option_removed", vars), true, nil
	})
}

func (d *deps) setMode(ctx context.Context, in *interaction.Interaction) (*discordgo.InteractionResponse, error) {
	return d.change(ctx, in, func(tx pgx.Tx, m *menu) (*discordgo.InteractionResponse, bool, error) {
		mode := Mode(in.Options().String("mode"))
		if !slices.Contains(modes, mode) {
			return badChoice(in, mode, modes), false, nil
		}
		if _, err := tx.Exec(ctx, `UPDATE rolemenus SET mode = $2 WHERE id = $1`, m.ID, mode); err != nil {
			return nil, false, err
		}
		return say(in, "mode_set", map[string]any{"Name": m.Name, "Mode": mode}), true, nil
	})
}

func (d *deps) setPicks(ctx context.Context, in *interaction.Interaction) (*discordgo.InteractionResponse, error) {
	return d.change(ctx, in, func(tx pgx.Tx, m *menu) (*discordgo.InteractionResponse, bool, error) {
		if m.Style != StyleSelect {
			return say(in, "picks_buttons", map[string]any{"Name": m.Name}), false, nil
		}
		o := in.Options()
		lo, ok := o.Int("min")
		if !ok {
			lo = int64(m.MinPicks)
		}
		hi, ok := o.Int("max")
		if !ok {
			hi = int64(m.MaxPicks)
		}
		if lo < 0 || hi < 0 || lo > maxOptions || hi > maxOptions || (hi != 0 && lo > hi) {
			return say(in, "bad_picks", map[string]any{"Min": lo, "Max": hi}), false, nil
		}
		if _, err := tx.Exec(ctx, `UPDATE rolemenus SET min_picks = $2, max_picks = $3 WHERE id = $1`, m.ID, lo, hi); err != nil {
			return nil, false, err
		}
		shown := hi
		if shown == 0 {
			shown = maxOptions
		}
		return say(in, "picks_set", map[string]any{"Name": m.Name, "Min": lo, "Max": shown}), true, nil
	})
}

// setRequired gates the menu behind a role (or lifts the gate). The role
// is not handed out, so it needs no safety check.
func (d *deps) setRequired(ctx context.Context, in *interaction.Interaction) (*discordgo.InteractionResponse, error) {
	return d.change(ctx, in, func(tx pgx.Tx, m *menu) (*discordgo.InteractionResponse, bool, error) {
		roleID := in.Options().String("role")
		if roleID == "" {
			if _, err := tx.Exec(ctx, `UPDATE rolemenus SET required_role = NULL WHERE id = $1`, m.ID); err != nil {
				return nil, false, err
			}
			return say(in, "required_cleared", map[string]any{"Name": m.Name}), true, nil
		}
		if _, err := tx.Exec(ctx, `UPDATE rolemenus SET required_role = $2 WHERE id = $1`, m.ID, roleID); err != nil {
			return nil, false, err
		}
		return say(in, "required_set", map[string]any{"Name": m.Name, "Role": roleMention(roleID)}), true, nil
	})
}

func (d *deps) setBlocked(ctx context.Context, in *interaction.Interaction) (*discordgo.InteractionResponse, error) {
	return d.change(ctx, in, func(tx pgx.Tx, m *menu) (*discordgo.InteractionResponse, bool, error) {
		o := in.Options()
		roleID := o.String("role")
		blocked, _ := o.Bool("blocked")
		vars := map[string]any{"Name": m.Name, "Role": roleMention(roleID)}
		if blocked {
			if _, err := tx.Exec(ctx, `UPDATE rolemenus SET blocked_roles = array_append(array_remove(blocked_roles, $2), $2) WHERE id = $1`, m.ID, roleID); err != nil {
				return nil, false, err
			}
			return say(in, "blocked_set", vars), true, nil
		}
		if _, err := tx.Exec(ctx, `UPDATE rolemenus SET blocked_roles = array_remove(blocked_roles, $2) WHERE id = $1`, m.ID, roleID); err != nil {
			return nil, false, err
		}
		return say(in, "blocked_cleared", vars), true, nil
	})
}

func (d *deps) setTemporary(ctx context.Context, in *interaction.Interaction) (*discordgo.InteractionResponse, error) {
	return d.change(ctx, in, func(tx pgx.Tx, m *menu) (*discordgo.InteractionResponse, bool, error) {
		raw := in.Options().String("duration")
		dur, ok := input.ParseDuration(raw)
		if !ok {
			return say(in, "bad_duration", map[string]any{"Duration": raw}), false, nil
		}
		if _, err := tx.Exec(ctx, `UPDATE rolemenus SET temporary_secs = $2 WHERE id = $1`, m.ID, int64(dur.Seconds())); err != nil {
			return nil, false, err
		}
		if dur == 0 {
			return say(in, "temporary_cleared", map[string]any{"Name": m.Name}), true, nil
		}
		return say(in, "temporary_set", map[string]any{"Name": m.Name, "Duration": input.FormatDuration(dur)}), true, nil
	})
}

// setLink puts the menu into the other menu's unique group.
func (d *deps) setLink(ctx context.Context, in *interaction.Interaction) (*discordgo.InteractionResponse, error) {
	return d.change(ctx, in, func(tx pgx.Tx, m *menu) (*discordgo.InteractionResponse, bool, error) {
		withName := in.Options().String("with")
		with, err := lockMenu(ctx, tx, in.GuildID, withName)
		if errors.Is(err, errNoMenu) {
			return say(in, "no_menu", map[string]any{"Name": withName}), false, nil
		}
		if err != nil {
			return nil, false, err
		}
		if with.ID == m.ID {
			return say(in, "link_self", nil), false, nil
		}
		// Every menu of either group joins the other's group.
		if _, err := tx.Exec(ctx, `UPDATE rolemenus SET unique_group = $3
			WHERE guild_id = $1 AND COALESCE(unique_group, id::text) IN ($2, $3)`, in.GuildID, m.group(), with.group()); err != nil {
			return nil, false, err
		}
		return say(in, "linked", map[string]any{"Name": m.Name, "With": with.Name}), false, nil
	})
}

// publish places the menu in a channel (moving it if it was elsewhere).
func (d *deps) publish(ctx context.Context, in *interaction.Interaction) (*discordgo.InteractionResponse, error) {
	return d.place(ctx, in, "publishing")
}

// move places the menu in another channel; the old message goes once the
// new one is up.
func (d *deps) move(ctx context.Context, in *interaction.Interaction) (*discordgo.InteractionResponse, error) {
	return d.place(ctx, in, "moving")
}

func (d *deps) place(ctx context.Context, in *interaction.Interaction, answer string) (*discordgo.InteractionResponse, error) {
	return d.change(ctx, in, func(tx pgx.Tx, m *menu) (*discordgo.InteractionResponse, bool, error) {
		if len(m.Options) == 0 {
			return say(in, "no_options", map[string]any{"Name": m.Name}), false, nil
		}
		channelID := in.Options().String("channel")
		if m.ChannelID == nil || *m.ChannelID != channelID || m.State != StateActive {
			// A message elsewhere is deleted after the new one is up; one
			// whose channel or message is gone is simply forgotten.
			_, err := tx.Exec(ctx, `UPDATE rolemenus SET
				stale_channel = CASE WHEN state = 'active' AND message_id IS NOT NULL THEN channel_id ELSE stale_channel END,
				stale_message = CASE WHEN state = 'active' AND message_id IS NOT NULL THEN message_id ELSE stale_message END,
				channel_id = $2, message_id = NULL, placement = placement + 1, state = 'active', state_detail = '' WHERE id = $1`, m.ID, channelID)
			if err != nil {
				return nil, false, err
			}
		}
		m.State = StateActive
		return say(in, answer, map[string]any{"Name": m.Name, "Channel": channelMention(channelID)}), true, nil
	})
}

// republish brings the menu back after its message was deleted, or posts
// the newest revision again.
func (d *deps) republish(ctx context.Context, in *interaction.Interaction) (*discordgo.InteractionResponse, error) {
	return d.change(ctx, in, func(tx pgx.Tx, m *menu) (*discordgo.InteractionResponse, bool, error) {
		if m.ChannelID == nil {
			return say(in, "not_published", map[string]any{"Name": m.Name}), false, nil
		}
		if len(m.Options) == 0 {
			return say(in, "no_options", map[string]any{"Name": m.Name}), false, nil
		}
		if err := revive(ctx, tx, m); err != nil {
			return nil, false, err
		}
		return say(in, "republishing", map[string]any{"Name": m.Name, "Channel": channelMention(*m.ChannelID)}), true, nil
	})
}

// deleteMenu deletes the configuration at once and the message in a job.
func (d *deps) deleteMenu(ctx context.Context, in *interaction.Interaction) (*discordgo.InteractionResponse, error) {
	return d.change(ctx, in, func(tx pgx.Tx, m *menu) (*discordgo.InteractionResponse, bool, error) {
		if _, err := tx.Exec(ctx, `DELETE FROM rolemenus WHERE id = $1`, m.ID); err != nil {
			return nil, false, err
		}
		var jobs []river.InsertManyParams
		for _, msg := range [][2]*string{{m.ChannelID, m.MessageID}, {m.StaleChannel, m.StaleMessage}} {
			if msg[0] != nil && msg[1] != nil {
				jobs = append(jobs, river.InsertManyParams{Args: cleanupArgs{ChannelID: *msg[0], MessageID: *msg[1]},
					InsertOpts: &river.InsertOpts{Queue: string(work.Sync)}})
			}
		}
		if len(jobs) > 0 {
			if err := in.Enqueue(ctx, outbox.IntentEvent, jobs...); err != nil {
				return nil, false, err
			}
		}
		return say(in, "deleted", map[string]any{"Name": m.Name}), false, nil
	})
}

// list answers with the guild's menus.
func (d *deps) list(ctx context.Context, in *interaction.Interaction) (*discordgo.InteractionResponse, error) {
	rows, err := in.DB().Query(ctx, `SELECT m.name, m.style, m.mode, m.channel_id, m.state,
		(SELECT count(*) FROM rolemenu_options o WHERE o.menu_id = m.id)
		FROM rolemenus m WHERE guild_id = $1 ORDER BY name`, in.GuildID)
	if err != nil {
		return nil, err
	}
	var lines []string
	for rows.Next() {
		var name, style, mode string
		var state State
		var channel *string
		var count int
		if err := rows.Scan(&name, &style, &mode, &channel, &state, &count); err != nil {
			return nil, err
		}
		where := in.Localizer.T("rolemenu.not_placed", nil)
		if channel != nil && state != StateDraft {
			where = channelMention(*channel)
		}
		lines = append(lines, in.Localizer.T("rolemenu.list_line", map[string]any{"Name": name, "Style": style, "Mode": mode, "Count": count, "Where": where}))
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(lines) == 0 {
		return say(in, "none", nil), nil
	}
	return interaction.Ephemeral(strings.Join(lines, "\n")), nil
}

// autocompleteMenu offers the guild's menus whose name contains what was
// typed so far.
func (d *deps) autocompleteMenu(ctx context.Context, in *interaction.Interaction) (*discordgo.InteractionResponse, error) {
	_, typed := in.Options().Focused()
	rows, err := in.DB().Query(ctx, `SELECT name FROM rolemenus WHERE guild_id = $1 AND name ILIKE '%' || $2 || '%' ORDER BY name LIMIT 25`,
		in.GuildID, escapeLike(typed))
	if err != nil {
		return nil, err
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, err
	}
	choices := make([]*discordgo.ApplicationCommandOptionChoice, 0, len(names))
	for _, n := range names {
		choices = append(choices, &discordgo.ApplicationCommandOptionChoice{Name: n, Value: n})
	}
	return interaction.Choices(choices...), nil
}

func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}
