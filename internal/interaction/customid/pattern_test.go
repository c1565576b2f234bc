package customid

import (
	"strings"
	"testing"
)

func TestFill(t *testing.T) {
	t.Parallel()
	id, err := Fill("rolemenu:1:pick:{menu}:{option}", "12", "3")
	if err != nil || id != "rolemenu:1:pick:12:3" {
		t.Fatalf("Fill = %q, %v", id, err)
	}
	for _, tc := range []struct {
		pattern string
		values  []string
	}{
		{"rolemenu:1:pick:{menu}:{option}", []string{"12"}},
		{"rolemenu:1:pick:{menu}", []string{"12", "3"}},
		{"rolemenu:1:pick:{menu}", []string{"1:2"}},
		{"rolemenu:1:pick:{menu}", []string{""}},
		{"rolemenu:1:pick:{menu}", []string{strings.Repeat("9", 100)}},
	} {
		if id, err := Fill(tc.pattern, tc.values...); err == nil {
			t.Errorf("Fill(%q, %q) = %q, want an error", tc.pattern, tc.values, id)
		}
	}
}
