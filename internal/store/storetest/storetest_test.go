package storetest

import (
	"testing"

	"github.com/herald-bot/herald/internal/testsupport/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func TestPoolHasHeraldAndRiverTables(t *testing.T) {
	t.Parallel()
	pool := Pool(t)
	for _, table := range []string{"guild_settings", "river_job", "herald_schema_migrations"} {
		var ok bool
		if err := pool.QueryRow(t.Context(), "SELECT to_regclass($1) IS NOT NULL", table).Scan(&ok); err != nil || !ok {
			t.Errorf("table %s missing (err %v)", table, err)
		}
	}
}
