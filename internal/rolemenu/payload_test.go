package rolemenu

import (
	"slices"
	"testing"
	"time"
)

// The payload's roles are brought up to date with herald's own changes
// when the order is certain, and refused (the member is read) when not.
func TestFromPayload(t *testing.T) {
	t.Parallel()
	received := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	on, off := true, false
	at := func(d time.Duration) time.Time { return received.Add(d) }
	for _, tc := range []struct {
		name    string
		roles   []string
		changes []roleChange
		want    []string // nil with ok false
	}{
		{"no payload kept", nil, nil, nil},
		{"no change since", []string{"a", "b"}, nil, []string{"a", "b"}},
		{"no roles at all", []string{}, nil, []string{}},
		{"added after the click arrived", []string{"a"}, []roleChange{{RoleID: "b", Present: &on, Done: at(2 * time.Second)}}, []string{"a", "b"}},
		{"removed after the click arrived", []string{"a", "b"}, []roleChange{{RoleID: "a", Present: &off, Done: at(2 * time.Second)}}, []string{"b"}},
		{"made before, and the payload shows it", []string{"a", "b"}, []roleChange{{RoleID: "b", Present: &on, Done: at(-time.Second)}}, []string{"a", "b"}},
		{"made before, but the payload does not show it", []string{"a"}, []roleChange{{RoleID: "b", Present: &on, Done: at(-time.Second)}}, nil},
		{"in flight when the click arrived", []string{"a"}, []roleChange{{RoleID: "b", Present: &on, Done: at(time.Second)}}, []string{"a", "b"}},
		{"in flight, and the payload shows it", []string{"a", "b"}, []roleChange{{RoleID: "b", Present: &on, Done: at(time.Second)}}, []string{"a", "b"}},
		{"outcome unknown", []string{"a"}, []roleChange{{RoleID: "a", Done: at(2 * time.Second)}}, nil},
		{"long before the click: in the payload", []string{"a"}, []roleChange{{RoleID: "b", Present: &on, Done: at(-2 * payloadLag)}}, []string{"a"}},
		{"rapid toggles after the click", []string{}, []roleChange{
			{RoleID: "a", Present: &on, Done: at(2 * time.Second)},
			{RoleID: "a", Present: &off, Done: at(4 * time.Second)}}, []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := fromPayload(tc.roles, received, tc.changes)
			if ok != (tc.want != nil) || ok && !slices.Equal(got, tc.want) && !(len(got) == 0 && len(tc.want) == 0) {
				t.Errorf("fromPayload = %v, %t; want %v, %t", got, ok, tc.want, tc.want != nil)
			}
		})
	}
}
