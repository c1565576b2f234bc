package app

import (
	"log/slog"
	"testing"

	"github.com/herald-bot/herald/internal/store/storetest"
)

// Every job kind herald registers has a label for /herald status in every
// shipped language, in the locale section of the feature that registered
// it: an admin never reads a raw kind such as `webhookproxy_drain`.
func TestEveryJobKindHasALabel(t *testing.T) {
	t.Parallel()
	a, err := New(t.Context(), testConfig(t, storetest.URL(t)), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer a.close()
	kinds := a.registry.Kinds()
	if len(kinds) < 10 {
		t.Fatalf("only %d job kinds registered: %v", len(kinds), kinds)
	}
	langs := a.catalog.Languages()
	if len(langs) < 4 {
		t.Fatalf("only %d languages shipped: %v", len(langs), langs)
	}
	for _, lang := range langs {
		loc := a.catalog.For(lang, "")
		for _, kind := range kinds {
			if key := a.registry.LabelKey(kind); loc.T(key, nil) == key {
				t.Errorf("job kind %s has no label in %s (%s in locales/%s.toml)", kind, lang, key, lang)
			}
		}
	}
}
