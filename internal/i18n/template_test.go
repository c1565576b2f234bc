package i18n

import (
	"slices"
	"testing"
	"text/template"
)

func TestFields(t *testing.T) {
	t.Parallel()
	tests := []struct {
		src  string
		want []string
	}{
		{"plain text", nil},
		{"{{.Seconds}} seconds", []string{"Seconds"}},
		{"{{.A}} and {{.B}} and {{.A}} again", []string{"A", "B"}},
		{"{{if .Ok}}{{.Yes}}{{else}}{{.No}}{{end}}", []string{"Ok", "Yes", "No"}},
		{"{{with .User}}{{.Name}}{{else}}{{.Anonymous}}{{end}}", []string{"User", "Anonymous"}},
		{"{{range .Items}}{{.Label}}{{end}}", []string{"Items"}},
		{"{{printf \"%d\" .Count}} {{$.Total}}", []string{"Count", "Total"}},
		{"{{.Role.Name}}", []string{"Role"}},
	}
	for _, tt := range tests {
		tmpl, err := template.New("t").Parse(tt.src)
		if err != nil {
			t.Fatalf("parse %q: %v", tt.src, err)
		}
		if got := fields(tmpl); !slices.Equal(got, tt.want) {
			t.Errorf("fields(%q) = %v, want %v", tt.src, got, tt.want)
		}
	}
}
