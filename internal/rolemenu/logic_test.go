package rolemenu

import (
	"slices"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/guildroles"
)

func guild() *guildRoles {
	return &guildRoles{Snapshot: &guildroles.Snapshot{GuildID: "g", OwnerID: "owner", BotRoles: []string{"bot"}, Roles: map[string]*discordgo.Role{
		"g":      {ID: "g", Name: "@everyone"},
		"low":    {ID: "low", Name: "Low", Position: 1},
		"mid":    {ID: "mid", Name: "Mid", Position: 3},
		"bot":    {ID: "bot", Name: "herald", Position: 5, Managed: true},
		"high":   {ID: "high", Name: "High", Position: 7},
		"banner": {ID: "banner", Name: "Banner", Position: 2, Permissions: discordgo.PermissionBanMembers},
	}}}
}

// Every refusal names the role and its reason; the owner may configure
// roles above their own, nobody roles at or above the bot's.
func TestCheckRole(t *testing.T) {
	t.Parallel()
	g := guild()
	for _, tc := range []struct {
		role, actor string
		actorRoles  []string
		want        string
	}{
		{"low", "admin", []string{"mid"}, ""},
		{"g", "admin", []string{"mid"}, "everyone"},
		{"bot", "admin", []string{"high"}, "managed"},
		{"high", "owner", nil, "above_bot"},
		{"mid", "admin", []string{"low"}, "above_you"},
		{"mid", "owner", nil, ""},
		{"mid", "", nil, ""}, // a member's click: no actor to outrank
		{"banner", "admin", []string{"mid"}, "dangerous"},
		{"gone", "admin", []string{"mid"}, "deleted"},
	} {
		got := ""
		if r := g.checkRole(tc.role, tc.actor, tc.actorRoles); r != nil {
			got = r.Key
			if r.Role == "" {
				t.Errorf("%s: refusal names no role", tc.role)
			}
		}
		if got != tc.want {
			t.Errorf("checkRole(%s by %s) = %q, want %q", tc.role, tc.actor, got, tc.want)
		}
	}
	g.allowDangerous = true
	if r := g.checkRole("banner", "admin", []string{"mid"}); r != nil {
		t.Errorf("with the owner's permission: %+v", r)
	}
}

// The click semantics of every mode, and the coalescing of rapid clicks:
// three toggles of one role are one change, two are none.
func TestApplyClick(t *testing.T) {
	t.Parallel()
	m := func(mode Mode) *menu {
		return &menu{Mode: mode, Options: []option{{ID: 1, RoleID: "a"}, {ID: 2, RoleID: "b"}, {ID: 3, RoleID: "c"}}}
	}
	group := []string{"a", "b", "c", "x"} // x: offered by a linked menu
	type click struct {
		isSelect bool
		picked   []string
	}
	for _, tc := range []struct {
		name   string
		mode   Mode
		has    []string
		clicks []click
		want   []string
	}{
		{"toggle on", "toggle", nil, []click{{false, []string{"a"}}}, []string{"a"}},
		{"toggle off", "toggle", []string{"a"}, []click{{false, []string{"a"}}}, nil},
		{"three rapid toggles", "toggle", nil, []click{{false, []string{"a"}}, {false, []string{"a"}}, {false, []string{"a"}}}, []string{"a"}},
		{"two rapid toggles", "toggle", nil, []click{{false, []string{"a"}}, {false, []string{"a"}}}, nil},
		{"unique takes one, drops the group", "unique", []string{"b", "x", "other"}, []click{{false, []string{"a"}}}, []string{"a", "other"}},
		{"unique again drops it", "unique", []string{"a"}, []click{{false, []string{"a"}}}, nil},
		{"verify only adds", "verify", []string{"a"}, []click{{false, []string{"a"}}, {false, []string{"b"}}}, []string{"a", "b"}},
		{"drop only removes", "drop", []string{"a"}, []click{{false, []string{"a"}}, {false, []string{"b"}}}, nil},
		{"select sets the menu's roles", "toggle", []string{"a", "other"}, []click{{true, []string{"b", "c"}}}, []string{"b", "c", "other"}},
		{"unique select", "unique", []string{"x"}, []click{{true, []string{"c"}}}, []string{"c"}},
		{"empty unique select clears the group", "unique", []string{"x", "a"}, []click{{true, nil}}, nil},
	} {
		want := map[string]bool{}
		for _, r := range tc.has {
			want[r] = true
		}
		for _, c := range tc.clicks {
			applyClick(want, m(tc.mode), c.isSelect, c.picked, group)
		}
		var got []string
		for r, ok := range want {
			if ok {
				got = append(got, r)
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: roles %v, want %v", tc.name, got, tc.want)
		}
	}
}
