package rolemenu

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/herald-bot/herald/internal/followup"
	"github.com/herald-bot/herald/internal/interaction"
	"github.com/herald-bot/herald/internal/outbox"
	"github.com/herald-bot/herald/internal/synctarget"
	"github.com/herald-bot/herald/internal/work"
)

// memberTarget is the sync target of one member's clicks in one guild:
// its revision is the newest click's id.
func memberTarget(guildID, userID string) string { return "rolemenu-member:" + guildID + ":" + userID }

// click is the fast path of a button or a select: it reads the custom ID
// and the picked values, enqueues the click and answers deferred and
// ephemeral. It touches no table: the click joins other interactions'
// work in one group-committed statement, so a burst of clicks is
// answered at the speed of one write, not of a read and a transaction
// each. Everything else is the click job's.
func (d *deps) click(ctx context.Context, in *interaction.Interaction) (*discordgo.InteractionResponse, error) {
	menuID, err := strconv.ParseInt(in.Vars["menu"], 10, 64)
	if err != nil {
		return say(in, "gone_menu", nil), nil
	}
	picked := []int64{}
	isSelect := in.Vars["option"] == ""
	values := []string{in.Vars["option"]}
	if isSelect {
		values = in.MessageComponentData().Values
	}
	for _, v := range values {
		id, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return say(in, "gone_option", nil), nil
		}
		picked = append(picked, id)
	}
	return followup.Defer(ctx, in, work.Interactive, clickArgs{GuildID: in.GuildID, UserID: in.UserID(),
		MenuID: menuID, OptionIDs: picked, IsSelect: isSelect, Roles: in.Member.Roles, Received: in.Received, Reply: followup.ReplyTo(in)})
}

// clickArgs is a click on its way to its member's apply job. Roles are
// the member's roles as the click's payload gave them, which herald
// received at Received (its own clock).
type clickArgs struct {
	GuildID   string    `json:"guild_id"`
	UserID    string    `json:"user_id"`
	MenuID    int64     `json:"menu_id"`
	OptionIDs []int64   `json:"option_ids"`
	IsSelect  bool      `json:"is_select"`
	Roles     []string  `json:"roles"`
	Received  time.Time `json:"received"`
	followup.Reply
}

func (clickArgs) Kind() string { return "rolemenu_click" }

type clickWorker struct {
	river.WorkerDefaults[clickArgs]
	*deps
}

// Work checks the click against the menu as it is now and either answers
// why it cannot count, or queues it for its member's apply job (one per
// member, taking every click that waits) and completes itself in the same
// transaction, so a rerun after a crash never queues the click twice.
func (w *clickWorker) Work(ctx context.Context, j *river.Job[clickArgs]) error {
	a := j.Args
	m, err := loadMenuByID(ctx, w.db, a.MenuID)
	if err != nil && !errors.Is(err, errNoMenu) {
		return err
	}
	if key, vars := a.refusal(m); key != "" {
		err := a.Answer(ctx, w.followups, work.Interactive, j.ID, a.In(w.catalog).T("rolemenu."+key, vars))
		if errors.Is(err, outbox.ErrTokenExpired) {
			return nil
		}
		return err
	}
	return pgx.BeginFunc(ctx, w.db, func(tx pgx.Tx) error {
		var id int64
		// A click queued before herald kept payloads has no received
		// time: its roles are not kept, and its plan reads the member.
		roles, received := a.Roles, &a.Received
		if a.Received.IsZero() {
			roles, received = nil, nil
		}
		if err := tx.QueryRow(ctx, `INSERT INTO rolemenu_clicks (guild_id, user_id, menu_id, option_ids, is_select, roles, received_at, interaction_id, locale, guild_locale)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id`,
			a.GuildID, a.UserID, a.MenuID, a.OptionIDs, a.IsSelect, roles, received, a.InteractionID, a.Locale, a.GuildLocale).Scan(&id); err != nil {
			return fmt.Errorf("rolemenu: record click: %w", err)
		}
		client := river.ClientFromContext[pgx.Tx](ctx)
		if _, _, err := synctarget.Request(ctx, tx, client, memberTarget(a.GuildID, a.UserID), id, applyArgs{GuildID: a.GuildID, UserID: a.UserID},
			work.ForGuild(&river.InsertOpts{Queue: string(work.Interactive)}, a.GuildID)); err != nil {
			return err
		}
		// River's completion statement, left to itself, is planned anew
		// on every call, and the planning costs more than the update:
		// the generic plan is the same primary-key lookup.
		if _, err := tx.Exec(ctx, `SET LOCAL plan_cache_mode = force_generic_plan`); err != nil {
			return fmt.Errorf("rolemenu: complete the click job: %w", err)
		}
		_, err := river.JobCompleteTx[*riverpgxv5.Driver](ctx, tx, j)
		return err
	})
}

// refusal is why the click cannot count against menu m (nil: deleted),
// as a message key and its variables, or "" when it can.
func (a clickArgs) refusal(m *menu) (string, map[string]any) {
	if m == nil || m.GuildID != a.GuildID {
		return "gone_menu", nil
	}
	for _, id := range a.OptionIDs {
		if _, ok := m.option(id); !ok {
			return "gone_option", nil
		}
	}
	if a.IsSelect {
		if lo, hi := m.picks(); len(a.OptionIDs) < lo || len(a.OptionIDs) > hi {
			return "bad_picks_count", map[string]any{"Min": lo, "Max": hi}
		}
	}
	if m.RequiredRole != nil && !slices.Contains(a.Roles, *m.RequiredRole) {
		return "needs_role", map[string]any{"Role": roleMention(*m.RequiredRole)}
	}
	for _, b := range m.BlockedRoles {
		if slices.Contains(a.Roles, b) {
			return "blocked", map[string]any{"Role": roleMention(b)}
		}
	}
	return "", nil
}

// picks is the number of options a select accepts at once.
func (m *menu) picks() (lo, hi int) {
	lo, hi = m.MinPicks, m.MaxPicks
	if hi == 0 || hi > len(m.Options) {
		hi = len(m.Options)
	}
	if m.Mode == ModeUnique {
		hi = min(hi, 1)
	}
	return min(lo, hi), hi
}
