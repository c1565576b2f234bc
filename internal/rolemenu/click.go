package rolemenu

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/bwmarrin/discordgo"
	"github.com/riverqueue/river"

	"github.com/herald-bot/herald/internal/interaction"
	"github.com/herald-bot/herald/internal/work"
)

// memberTarget is the sync target of one member's clicks in one guild:
// its revision is the newest click's id.
func memberTarget(guildID, userID string) string { return "rolemenu-member:" + guildID + ":" + userID }

// click is the fast path of a button or a select: check what the payload
// can tell (the option exists, the member may use the menu, the number of
// picks), record the click and request the member's apply job, answer
// deferred and ephemeral. Everything else is looked up by the job.
func (d *deps) click(ctx context.Context, in *interaction.Interaction) (*discordgo.InteractionResponse, error) {
	menuID, err := strconv.ParseInt(in.Vars["menu"], 10, 64)
	if err != nil {
		return say(in, "gone_menu", nil), nil
	}
	m, err := loadMenuByID(ctx, d.db, menuID)
	if errors.Is(err, errNoMenu) || err == nil && m.GuildID != in.GuildID {
		return say(in, "gone_menu", nil), nil
	}
	if err != nil {
		return nil, err
	}
	var picked []int64
	isSelect := in.Vars["option"] == ""
	if isSelect {
		for _, v := range in.MessageComponentData().Values {
			id, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return say(in, "gone_option", nil), nil
			}
			picked = append(picked, id)
		}
		lo, hi := m.picks()
		if len(picked) < lo || len(picked) > hi {
			return say(in, "bad_picks_count", map[string]any{"Min": lo, "Max": hi}), nil
		}
	} else {
		id, err := strconv.ParseInt(in.Vars["option"], 10, 64)
		if err != nil {
			return say(in, "gone_option", nil), nil
		}
		picked = []int64{id}
	}
	for _, id := range picked {
		if _, ok := m.option(id); !ok {
			return say(in, "gone_option", nil), nil
		}
	}
	has := in.Member.Roles
	if m.RequiredRole != nil && !slices.Contains(has, *m.RequiredRole) {
		return say(in, "needs_role", map[string]any{"Role": roleMention(*m.RequiredRole)}), nil
	}
	for _, b := range m.BlockedRoles {
		if slices.Contains(has, b) {
			return say(in, "blocked", map[string]any{"Role": roleMention(b)}), nil
		}
	}
	tx, err := in.Tx(ctx)
	if err != nil {
		return nil, err
	}
	userLocale, guildLocale := in.Locales()
	var clickID int64
	if err := tx.QueryRow(ctx, `INSERT INTO rolemenu_clicks (guild_id, user_id, menu_id, option_ids, is_select, interaction_id, locale, guild_locale)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
		in.GuildID, in.UserID(), m.ID, picked, isSelect, in.ID, userLocale, guildLocale).Scan(&clickID); err != nil {
		return nil, fmt.Errorf("rolemenu: record click: %w", err)
	}
	err = in.RequestSync(ctx, memberTarget(in.GuildID, in.UserID()), clickID, applyArgs{GuildID: in.GuildID, UserID: in.UserID()},
		&river.InsertOpts{Queue: string(work.Interactive)})
	if err != nil {
		return nil, err
	}
	return interaction.Deferred(true), nil
}

// picks is the number of options a select accepts at once.
func (m *menu) picks() (lo, hi int) {
	lo, hi = m.MinPicks, m.MaxPicks
	if hi == 0 || hi > len(m.Options) {
		hi = len(m.Options)
	}
	if m.Mode == "unique" {
		hi = min(hi, 1)
	}
	return min(lo, hi), hi
}
