package migrations

import (
	"fmt"
	"io/fs"
	"strings"
	"testing"
)

// Every migration is a goose SQL file named NNNNN_name.sql, numbered
// without gaps, with both an Up and a Down section.
func TestFilesAreWellFormed(t *testing.T) {
	names, err := fs.Glob(FS, "*.sql")
	if err != nil || len(names) == 0 {
		t.Fatalf("no migrations embedded (%v)", err)
	}
	for i, name := range names {
		if want := fmt.Sprintf("%05d_", i+1); !strings.HasPrefix(name, want) {
			t.Errorf("%s: want the prefix %s (numbered in order, no gaps)", name, want)
		}
		b, err := fs.ReadFile(FS, name)
		if err != nil {
			t.Fatal(err)
		}
		for _, section := range []string{"-- +goose Up", "-- +goose Down"} {
			if !strings.Contains(string(b), section) {
				t.Errorf("%s: missing %q", name, section)
			}
		}
	}
}
