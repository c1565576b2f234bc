package rolemenu

import (
	"errors"
	"slices"
	"testing"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/herald-bot/herald/internal/store/storetest"
)

// A menu is read with its options in their order in one query: by id
// from the pool, by name locked in a transaction; a menu with no options
// has none, and a menu that does not exist is errNoMenu.
func TestReadMenu(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool := storetest.Pool(t)
	var full, empty int64
	for name, id := range map[string]*int64{"full": &full, "empty": &empty} {
		if err := pool.QueryRow(ctx, `INSERT INTO rolemenus (guild_id, name, style, mode, description) VALUES ('1', $1, 'buttons', 'toggle', '')
			RETURNING id`, name).Scan(id); err != nil {
			t.Fatal(err)
		}
	}
	// Inserted out of order: position decides, then id.
	for _, o := range []struct {
		role, label string
		position    int
	}{{"30", "third", 2}, {"10", "first", 0}, {"20", "second", 1}, {"40", "fourth", 2}} {
		if _, err := pool.Exec(ctx, `INSERT INTO rolemenu_options (menu_id, role_id, label, emoji, description, position)
			VALUES ($1, $2, $3, 'e'||$2, 'd'||$2, $4)`, full, o.role, o.label, o.position); err != nil {
			t.Fatal(err)
		}
	}
	m, err := loadMenuByID(ctx, pool, full)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range m.Options {
		got = append(got, o.RoleID+" "+o.Label+" "+o.Emoji+" "+o.Description)
		if o.ID == 0 {
			t.Errorf("option %s has no id", o.Label)
		}
	}
	want := []string{"10 first e10 d10", "20 second e20 d20", "30 third e30 d30", "40 fourth e40 d40"}
	if m.Name != "full" || m.GuildID != "1" || !slices.Equal(got, want) {
		t.Errorf("menu %q of guild %s with options %q, want full of 1 with %q", m.Name, m.GuildID, got, want)
	}
	if m, err := loadMenuByID(ctx, pool, empty); err != nil || m.Name != "empty" || len(m.Options) != 0 {
		t.Errorf("empty menu: %+v, %v", m, err)
	}
	if _, err := loadMenuByID(ctx, pool, empty+full); !errors.Is(err, errNoMenu) {
		t.Errorf("missing menu: %v, want errNoMenu", err)
	}

	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if m, err := lockMenu(ctx, tx, "1", "full"); err != nil || len(m.Options) != 4 {
		t.Fatalf("locked read: %+v, %v", m, err)
	}
	_, err = pool.Exec(ctx, `SELECT 1 FROM rolemenus WHERE id = $1 FOR UPDATE NOWAIT`, full)
	if pgErr := (*pgconn.PgError)(nil); !errors.As(err, &pgErr) || pgErr.Code != pgerrcode.LockNotAvailable {
		t.Errorf("locking the menu beside lockMenu: %v, want lock_not_available", err)
	}
}
