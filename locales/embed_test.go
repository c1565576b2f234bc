package locales_test

import (
	"io/fs"
	"slices"
	"testing"

	"github.com/herald-bot/herald/locales"
)

func TestFSHoldsEveryCatalog(t *testing.T) {
	t.Parallel()
	got, err := fs.Glob(locales.FS, "*")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"de.toml", "en.toml", "fr.toml", "ko.toml"}
	if !slices.Equal(got, want) {
		t.Fatalf("embedded files = %v, want %v", got, want)
	}
}
