package rolemenu

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"
)

// menu is one role menu as configured.
type menu struct {
	ID            int64
	GuildID       string
	Name          string
	Style         Style
	Mode          Mode
	Description   string
	MinPicks      int
	MaxPicks      int
	RequiredRole  *string
	BlockedRoles  []string
	TemporarySecs int64
	UniqueGroup   *string
	ChannelID     *string
	MessageID     *string
	StaleChannel  *string
	StaleMessage  *string
	State         State
	StateDetail   string
	Revision      int64
	Placement     int64 // which message the menu lives in: grows with each new one
	Options       []option
}

// option is one role a menu offers.
type option struct {
	ID          int64
	RoleID      string
	Label       string
	Emoji       string
	Description string
}

// maxOptions is Discord's cap on buttons in a message (5 rows of 5) and on
// options in a select menu.
const maxOptions = 25

const menuColumns = `id, guild_id, name, style, mode, description, min_picks, max_picks, required_role, blocked_roles,
	temporary_secs, unique_group, channel_id, message_id, stale_channel, stale_message, state, state_detail, revision, placement`

func scanMenu(row pgx.Row) (*menu, error) {
	m := &menu{}
	err := row.Scan(&m.ID, &m.GuildID, &m.Name, &m.Style, &m.Mode, &m.Description, &m.MinPicks, &m.MaxPicks, &m.RequiredRole,
		&m.BlockedRoles, &m.TemporarySecs, &m.UniqueGroup, &m.ChannelID, &m.MessageID, &m.StaleChannel, &m.StaleMessage,
		&m.State, &m.StateDetail, &m.Revision, &m.Placement)
	return m, err
}

// errNoMenu means the guild has no menu of that name or id.
var errNoMenu = errors.New("rolemenu: no such menu")

// querier is a pool or a transaction.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// loadMenuByID reads a menu by id, with its options.
func loadMenuByID(ctx context.Context, q querier, id int64) (*menu, error) {
	return readMenu(ctx, q, `SELECT `+menuColumns+` FROM rolemenus WHERE id = $1`, id)
}

// lockMenu reads a guild's menu by name in tx and locks it for the change
// the caller is about to make.
func lockMenu(ctx context.Context, tx pgx.Tx, guildID, name string) (*menu, error) {
	return readMenu(ctx, tx, `SELECT `+menuColumns+` FROM rolemenus WHERE guild_id = $1 AND name = $2 FOR UPDATE`, guildID, name)
}

func readMenu(ctx context.Context, q querier, sql string, args ...any) (*menu, error) {
	m, err := scanMenu(q.QueryRow(ctx, sql, args...))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, errNoMenu
	}
	if err != nil {
		return nil, fmt.Errorf("rolemenu: read menu: %w", err)
	}
	rows, err := q.Query(ctx, `SELECT id, role_id, label, emoji, description FROM rolemenu_options WHERE menu_id = $1 ORDER BY position, id`, m.ID)
	if err != nil {
		return nil, fmt.Errorf("rolemenu: read options: %w", err)
	}
	m.Options, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (option, error) {
		var o option
		err := r.Scan(&o.ID, &o.RoleID, &o.Label, &o.Emoji, &o.Description)
		return o, err
	})
	if err != nil {
		return nil, fmt.Errorf("rolemenu: read options: %w", err)
	}
	return m, nil
}

// option returns the menu's option with id.
func (m *menu) option(id int64) (option, bool) {
	for _, o := range m.Options {
		if o.ID == id {
			return o, true
		}
	}
	return option{}, false
}

// optionFor returns the menu's option offering roleID.
func (m *menu) optionFor(roleID string) (option, bool) {
	for _, o := range m.Options {
		if o.RoleID == roleID {
			return o, true
		}
	}
	return option{}, false
}

// group is the menu's unique group: linked menus share one.
func (m *menu) group() string {
	if m.UniqueGroup != nil {
		return *m.UniqueGroup
	}
	return strconv.FormatInt(m.ID, 10)
}

// target is the menu's sync target.
func (m *menu) target() string { return menuTarget(m.ID) }

func menuTarget(id int64) string { return "rolemenu:" + strconv.FormatInt(id, 10) }

// bump records a change of the menu's configuration in tx: a new
// revision, which the caller asks to publish when the menu is on Discord.
func bump(ctx context.Context, tx pgx.Tx, m *menu) error {
	err := tx.QueryRow(ctx, `UPDATE rolemenus SET revision = revision + 1 WHERE id = $1 RETURNING revision`, m.ID).Scan(&m.Revision)
	if err != nil {
		return fmt.Errorf("rolemenu: bump %s: %w", m.Name, err)
	}
	return nil
}

// revive makes a menu whose message or channel was deleted active again,
// in a new placement: the next publish posts a new message.
func revive(ctx context.Context, tx pgx.Tx, m *menu) error {
	if m.State == StateTargetMissing {
		if _, err := tx.Exec(ctx, `UPDATE rolemenus SET message_id = NULL, placement = placement + 1, state = 'active', state_detail = ''
			WHERE id = $1`, m.ID); err != nil {
			return fmt.Errorf("rolemenu: revive %s: %w", m.Name, err)
		}
	}
	m.State = StateActive
	return nil
}
