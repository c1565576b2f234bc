package customid

import (
	"errors"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	t.Parallel()
	good := []struct {
		in   string
		want ID
	}{
		{"rolemenu:1:pick/12/3", ID{"rolemenu", 1, "pick/12/3"}},
		{"tickets:12:close:12345678901234567", ID{"tickets", 12, "close:12345678901234567"}},
		{"a:1:", ID{"a", 1, ""}},
		{"web-hook_2:3:x", ID{"web-hook_2", 3, "x"}},
	}
	for _, tc := range good {
		got, err := Parse(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
		if got.String() != tc.in {
			t.Errorf("String() = %q, want %q", got.String(), tc.in)
		}
	}
	bad := []string{
		"", "rolemenu", "rolemenu:1", "rolemenu:one:x", "rolemenu:0:x", "rolemenu:01:x", "rolemenu:-1:x",
		"RoleMenu:1:x", "1role:1:x", ":1:x", "role menu:1:x", "rolemenu:1:é", "rolemenu:1:a b", "rolemenu:1:\x00",
		"rolemenu:1:" + strings.Repeat("x", 90), strings.Repeat("f", 33) + ":1:x", "rolemenu:99999999999999999999:x",
	}
	for _, in := range bad {
		if got, err := Parse(in); !errors.Is(err, ErrMalformed) {
			t.Errorf("Parse(%q) = %+v, %v; want ErrMalformed", in, got, err)
		}
	}
}

func TestNew(t *testing.T) {
	t.Parallel()
	if s, err := New("tickets", 2, "open/5"); err != nil || s != "tickets:2:open/5" {
		t.Errorf("New = %q, %v", s, err)
	}
	if _, err := New("tickets", 2, strings.Repeat("x", 100)); err == nil {
		t.Error("an id over 100 characters must be refused")
	}
	if _, err := New("Tickets", 2, "x"); err == nil {
		t.Error("a bad feature name must be refused")
	}
}
