package tickets

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/herald-bot/herald/internal/interaction"
	"github.com/herald-bot/herald/internal/work"
)

// say answers the member, ephemeral, in their language.
func say(in *interaction.Interaction, key string, vars map[string]any) *discordgo.InteractionResponse {
	return interaction.Ephemeral(in.Localizer.T("tickets."+key, vars))
}

func roleMention(id string) string    { return "<@&" + id + ">" }
func channelMention(id string) string { return "<#" + id + ">" }
func userMention(id string) string    { return "<@" + id + ">" }

// setup saves the guild's ticket configuration. The channels are checked
// for their type here, since a payload may name any channel; whether
// herald may create threads or channels there shows when a ticket opens.
func (d *deps) setup(ctx context.Context, in *interaction.Interaction) (*discordgo.InteractionResponse, error) {
	o := in.Options()
	role, ok := o.Role("support-role")
	if !ok || role.ID == in.GuildID || role.Managed {
		return say(in, "bad_role", nil), nil
	}
	mode := cmp.Or(Mode(o.String("mode")), ModeThread)
	if mode != ModeThread && mode != ModeChannel {
		return say(in, "bad_mode", nil), nil
	}
	var ids [4]*string
	for i, c := range []struct {
		name string
		typ  discordgo.ChannelType
	}{{"channel", discordgo.ChannelTypeGuildText}, {"category", discordgo.ChannelTypeGuildCategory},
		{"log-channel", discordgo.ChannelTypeGuildText}, {"notify-channel", discordgo.ChannelTypeGuildText}} {
		if o.String(c.name) == "" {
			continue
		}
		ch, ok := o.Channel(c.name)
		if !ok || ch.Type != c.typ {
			return say(in, "bad_channel", map[string]any{"Option": c.name}), nil
		}
		ids[i] = &ch.ID
	}
	if mode == ModeThread && ids[1] != nil {
		return say(in, "category_thread", nil), nil
	}
	if _, err := in.DB().Exec(ctx, `INSERT INTO ticket_settings (guild_id, support_role, mode, channel_id, category_id, log_channel_id,
		notify_channel_id) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (guild_id) DO UPDATE SET support_role = EXCLUDED.support_role,
		mode = EXCLUDED.mode, channel_id = EXCLUDED.channel_id, category_id = EXCLUDED.category_id, log_channel_id = EXCLUDED.log_channel_id,
		notify_channel_id = EXCLUDED.notify_channel_id`,
		in.GuildID, role.ID, mode, ids[0], ids[1], ids[2], ids[3]); err != nil {
		return nil, fmt.Errorf("tickets: setup: %w", err)
	}
	log := in.Localizer.T("tickets.no_log", nil)
	if ids[2] != nil {
		log = channelMention(*ids[2])
	}
	resp := say(in, "setup_done", map[string]any{"Role": roleMention(role.ID), "Mode": mode, "Log": log})
	if mode == ModeThread {
		// Staff see a private thread only once added: say how they will.
		note := in.Localizer.T("tickets.setup_no_notify", nil)
		if c := cmp.Or(ids[3], ids[2]); c != nil {
			note = in.Localizer.T("tickets.setup_notify", map[string]any{"Channel": channelMention(*c)})
		}
		resp.Data.Content += "\n" + note
	}
	if !d.contentIntent {
		resp.Data.Content += "\n" + in.Localizer.T("tickets.setup_no_content", nil)
	}
	return resp, nil
}

// settings changes the options given and keeps the rest.
func (d *deps) settings(ctx context.Context, in *interaction.Interaction) (*discordgo.InteractionResponse, error) {
	o := in.Options()
	var sets []string
	var args []any
	set := func(column string, v any) {
		args = append(args, v)
		sets = append(sets, column+" = $"+strconv.Itoa(len(args)+1))
	}
	if n, ok := o.Int("limit"); ok {
		if n < 1 || n > 10 {
			return say(in, "bad_setting", map[string]any{"Option": "limit"}), nil
		}
		set("max_open", n)
	}
	if n, ok := o.Int("cooldown"); ok {
		if n < 0 || n > 86400 {
			return say(in, "bad_setting", map[string]any{"Option": "cooldown"}), nil
		}
		set("cooldown_secs", n)
	}
	if n, ok := o.Int("inactivity"); ok {
		if n < 0 || n > 720 {
			return say(in, "bad_setting", map[string]any{"Option": "inactivity"}), nil
		}
		set("inactivity_secs", n*int64(time.Hour/time.Second))
	}
	if v, ok := o.Bool("close-on-leave"); ok {
		set("close_on_leave", v)
	}
	if v, ok := o.Bool("dm-transcripts"); ok {
		set("dm_transcripts", v)
	}
	if v := o.String("naming"); v != "" {
		if v != "number" && v != "username" {
			return say(in, "bad_setting", map[string]any{"Option": "naming"}), nil
		}
		set("naming", v)
	}
	if v := o.String("welcome"); v != "" {
		if utf8.RuneCountInString(v) > 1000 {
			return say(in, "bad_setting", map[string]any{"Option": "welcome"}), nil
		}
		set("welcome", strings.TrimSpace(v))
	}
	if len(sets) > 0 {
		tag, err := in.DB().Exec(ctx, `UPDATE ticket_settings SET `+strings.Join(sets, ", ")+` WHERE guild_id = $1`, append([]any{in.GuildID}, args...)...)
		if err != nil {
			return nil, fmt.Errorf("tickets: settings: %w", err)
		}
		if tag.RowsAffected() == 0 {
			return say(in, "not_setup", nil), nil
		}
	}
	s, err := loadSettings(ctx, in.DB(), in.GuildID)
	if errors.Is(err, errNoSettings) {
		return say(in, "not_setup", nil), nil
	}
	if err != nil {
		return nil, err
	}
	return say(in, "settings_now", map[string]any{"Limit": s.MaxOpen, "Cooldown": s.CooldownSecs,
		"Inactivity": s.InactivitySecs / 3600, "Leave": yesNo(in, s.CloseOnLeave), "DM": yesNo(in, s.DMTranscripts), "Naming": s.Naming}), nil
}

func yesNo(in *interaction.Interaction, b bool) string {
	if b {
		return in.Localizer.T("tickets.yes", nil)
	}
	return in.Localizer.T("tickets.no", nil)
}

// publishDelay folds an admin's quick succession of panel edits into one
// message edit, as role menus do.
const publishDelay = time.Second

func publishOpts() *river.InsertOpts {
	return &river.InsertOpts{Queue: string(work.Sync), ScheduledAt: time.Now().Add(publishDelay)}
}

// panel saves a new panel and requests its publish.
func (d *deps) panel(ctx context.Context, in *interaction.Interaction) (*discordgo.InteractionResponse, error) {
	o := in.Options()
	ch, ok := o.Channel("channel")
	if !ok || ch.Type != discordgo.ChannelTypeGuildText {
		return say(in, "bad_channel", map[string]any{"Option": "channel"}), nil
	}
	_, guildLocale := in.Locales()
	title := strings.TrimSpace(o.String("title"))
	if title == "" {
		title = d.catalog.For(guildLocale, "").T("tickets.panel_title", nil)
	}
	if utf8.RuneCountInString(title) > 100 {
		return say(in, "bad_setting", map[string]any{"Option": "title"}), nil
	}
	tx, err := in.Tx(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := loadSettings(ctx, tx, in.GuildID); errors.Is(err, errNoSettings) {
		return say(in, "not_setup", nil), nil
	} else if err != nil {
		return nil, err
	}
	var id int64
	if err := tx.QueryRow(ctx, `INSERT INTO ticket_panels (guild_id, channel_id, title, locale) VALUES ($1, $2, $3, $4) RETURNING id`,
		in.GuildID, ch.ID, title, guildLocale).Scan(&id); err != nil {
		return nil, fmt.Errorf("tickets: panel: %w", err)
	}
	if err := in.RequestSync(ctx, panelTarget(id), 1, panelArgs{PanelID: id}, publishOpts()); err != nil {
		return nil, err
	}
	return say(in, "panel_publishing", map[string]any{"ID": id, "Channel": channelMention(ch.ID)}), nil
}

// maxTopics is Discord's cap on buttons in one message (5 rows of 5).
const maxTopics = 25

func (d *deps) topicAdd(ctx context.Context, in *interaction.Interaction) (*discordgo.InteractionResponse, error) {
	return d.changePanel(ctx, in, func(tx pgx.Tx, p *panel, label string) (*discordgo.InteractionResponse, bool, error) {
		vars := map[string]any{"Label": label, "ID": p.ID}
		for _, t := range p.Topics {
			if strings.EqualFold(t.Label, label) {
				return say(in, "topic_exists", vars), false, nil
			}
		}
		if len(p.Topics) >= maxTopics {
			return say(in, "topics_full", vars), false, nil
		}
		if _, err := tx.Exec(ctx, `INSERT INTO ticket_topics (panel_id, label, position)
			VALUES ($1, $2, (SELECT COALESCE(max(position), 0) + 1 FROM ticket_topics WHERE panel_id = $1))`, p.ID, label); err != nil {
			return nil, false, err
		}
		return say(in, "topic_added", vars), true, nil
	})
}

func (d *deps) topicRemove(ctx context.Context, in *interaction.Interaction) (*discordgo.InteractionResponse, error) {
	return d.changePanel(ctx, in, func(tx pgx.Tx, p *panel, label string) (*discordgo.InteractionResponse, bool, error) {
		vars := map[string]any{"Label": label, "ID": p.ID}
		tag, err := tx.Exec(ctx, `DELETE FROM ticket_topics WHERE panel_id = $1 AND lower(label) = lower($2)`, p.ID, label)
		if err != nil {
			return nil, false, err
		}
		if tag.RowsAffected() == 0 {
			return say(in, "no_topic", vars), false, nil
		}
		return say(in, "topic_removed", vars), true, nil
	})
}

// changePanel runs fn on the locked panel the option "panel" names, with
// the option "label" checked, and requests a publish when fn changed it.
func (d *deps) changePanel(ctx context.Context, in *interaction.Interaction,
	fn func(tx pgx.Tx, p *panel, label string) (*discordgo.InteractionResponse, bool, error)) (*discordgo.InteractionResponse, error) {
	o := in.Options()
	label := strings.TrimSpace(o.String("label"))
	if label == "" || utf8.RuneCountInString(label) > 80 {
		return say(in, "bad_setting", map[string]any{"Option": "label"}), nil
	}
	id, err := strconv.ParseInt(strings.TrimPrefix(o.String("panel"), "#"), 10, 64)
	if err != nil {
		return say(in, "no_panel", map[string]any{"Panel": o.String("panel")}), nil
	}
	tx, err := in.Tx(ctx)
	if err != nil {
		return nil, err
	}
	var guildID string
	err = tx.QueryRow(ctx, `SELECT guild_id FROM ticket_panels WHERE id = $1 FOR UPDATE`, id).Scan(&guildID)
	if errors.Is(err, pgx.ErrNoRows) || err == nil && guildID != in.GuildID {
		return say(in, "no_panel", map[string]any{"Panel": o.String("panel")}), nil
	}
	if err != nil {
		return nil, err
	}
	p, err := loadPanel(ctx, tx, id)
	if err != nil {
		return nil, err
	}
	resp, changed, err := fn(tx, p, label)
	if err != nil || !changed {
		return resp, err
	}
	if err := tx.QueryRow(ctx, `UPDATE ticket_panels SET revision = revision + 1 WHERE id = $1 RETURNING revision`, id).Scan(&p.Revision); err != nil {
		return nil, err
	}
	if p.State == PanelActive {
		if err := in.RequestSync(ctx, panelTarget(id), p.Revision, panelArgs{PanelID: id}, publishOpts()); err != nil {
			return nil, err
		}
	}
	return resp, nil
}

// autocompletePanel offers the guild's panels.
func (d *deps) autocompletePanel(ctx context.Context, in *interaction.Interaction) (*discordgo.InteractionResponse, error) {
	rows, err := in.DB().Query(ctx, `SELECT id, title FROM ticket_panels WHERE guild_id = $1 ORDER BY id DESC LIMIT 25`, in.GuildID)
	if err != nil {
		return nil, err
	}
	var choices []*discordgo.ApplicationCommandOptionChoice
	for rows.Next() {
		var id int64
		var title string
		if err := rows.Scan(&id, &title); err != nil {
			return nil, err
		}
		choices = append(choices, &discordgo.ApplicationCommandOptionChoice{Name: truncate(fmt.Sprintf("#%d %s", id, title), 100),
			Value: strconv.FormatInt(id, 10)})
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return interaction.Choices(choices...), nil
}

// truncate cuts s to at most n runes, marking the cut.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
