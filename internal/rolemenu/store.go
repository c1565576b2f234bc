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

// scanMenu scans menuColumns into a menu, and the rest of the row into
// extra.
func scanMenu(row pgx.Row, extra ...any) (*menu, error) {
	m := &menu{}
	err := row.Scan(append([]any{&m.ID, &m.GuildID, &m.Name, &m.Style, &m.Mode, &m.Description, &m.MinPicks, &m.MaxPicks, &m.RequiredRole,
		&m.BlockedRoles, &m.TemporarySecs, &m.UniqueGroup, &m.ChannelID, &m.MessageID, &m.StaleChannel, &m.StaleMessage,
		&m.State, &m.StateDetail, &m.Revision, &m.Placement}, extra...)...)
	return m, err
}

// errNoMenu means the guild has no menu of that name or id.
var errNoMenu = errors.New("rolemenu: no such menu")

// querier is a pool or a transaction.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// loadMenuByID reads a menu by id, with its options.
func loadMenuByID(ctx context.Context, q querier, id int64) (*menu, error) {
	return readMenu(ctx, q, `WHERE id = $1`, id)
}

// lockMenu reads a guild's menu by name in tx and locks it for the change
// the caller is about to make.
func lockMenu(ctx context.Context, tx pgx.Tx, guildID, name string) (*menu, error) {
	return readMenu(ctx, tx, `WHERE guild_id = $1 AND name = $2 FOR UPDATE OF rolemenus`, guildID, name)
}

// readMenu reads the menu that where picks, with its options in order, in
// one query: a click's job reads its menu first, and a round trip costs
// as much as the query.
func readMenu(ctx context.Context, q querier, where string, args ...any) (*menu, error) {
	var ids []int64
	var roles, labels, emojis, descriptions []string
	m, err := scanMenu(q.QueryRow(ctx, `SELECT `+menuColumns+`, o.ids, o.roles, o.labels, o.emojis, o.descriptions
		FROM rolemenus, LATERAL (SELECT array_agg(id ORDER BY position, id) AS ids, array_agg(role_id ORDER BY position, id) AS roles,
				array_agg(label ORDER BY position, id) AS labels, array_agg(emoji ORDER BY position, id) AS emojis,
				array_agg(description ORDER BY position, id) AS descriptions
			FROM rolemenu_options WHERE menu_id = rolemenus.id) o `+where, args...),
		&ids, &roles, &labels, &emojis, &descriptions)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, errNoMenu
	}
	if err != nil {
		return nil, fmt.Errorf("rolemenu: read menu: %w", err)
	}
	for i, id := range ids {
		m.Options = append(m.Options, option{ID: id, RoleID: roles[i], Label: labels[i], Emoji: emojis[i], Description: descriptions[i]})
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
