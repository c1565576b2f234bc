package pgserver_test

import (
	"strings"
	"testing"

	"github.com/herald-bot/herald/internal/pgserver"
)

func TestWithDatabase(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"postgres://u:p@h:5/old?sslmode=disable", "postgres://u:p@h:5/new?sslmode=disable"},
		{"postgresql://h/old?dbname=old", "postgresql://h/new"},
		{"postgres://h", "postgres://h/new"},
		{"host=h dbname=old", "host=h dbname=old dbname=new"},
	}
	for _, tt := range tests {
		got, err := pgserver.WithDatabase(tt.in, "new")
		if err != nil || got != tt.want {
			t.Errorf("WithDatabase(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	if _, err := pgserver.WithDatabase("postgres://u:sekret@h:bad port/x", "new"); err == nil || strings.Contains(err.Error(), "sekret") {
		t.Errorf("unparsable URL: error %v, want one without the password", err)
	}
}
