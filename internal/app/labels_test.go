package app

import (
	"log/slog"
	"testing"

	"github.com/herald-bot/herald/internal/store/storetest"
)

// Every job kind herald registers has a label for /herald status (the
// shipped catalogs hold the same keys, TestShippedKeysMatch): an admin
// never reads a raw kind such as `webhookproxy_drain`.
func TestEveryJobKindHasALabel(t *testing.T) {
	t.Parallel()
	a, err := New(t.Context(), testConfig(t, storetest.URL(t)), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer a.close()
	loc := a.catalog.For("en", "")
	kinds := a.registry.Kinds()
	if len(kinds) < 10 {
		t.Fatalf("only %d job kinds registered: %v", len(kinds), kinds)
	}
	for _, kind := range kinds {
		if key := "status.kind." + kind; loc.T(key, nil) == key {
			t.Errorf("job kind %s has no label (%s in locales/*.toml)", kind, key)
		}
	}
}
