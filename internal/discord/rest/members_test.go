package rest_test

import (
	"slices"
	"testing"

	"github.com/herald-bot/herald/internal/discord/rest"
	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/discord/simtest"
)

func TestGuildRolesAndMembers(t *testing.T) {
	t.Parallel()
	w := newWorld(t, sim.DefaultFixture())
	// Listing members needs the Server Members intent switched on.
	w.s.SetApplicationFlags(simtest.PortalIntents)
	ctx := t.Context()
	g, err := w.c.Guild(ctx, w.g.ID)
	if err != nil || g.ID != w.g.ID {
		t.Fatalf("guild = %+v, %v", g, err)
	}
	roles, err := w.c.Roles(ctx, w.g.ID)
	if err != nil || len(roles) < 6 {
		t.Fatalf("roles = %d, %v", len(roles), err)
	}
	m, err := w.c.Member(ctx, w.g.ID, w.g.Member("carol"))
	if err != nil || m.User.Username != "carol" || len(m.Roles) != 2 {
		t.Fatalf("carol = %+v, %v", m, err)
	}
	page, err := w.c.Members(ctx, w.g.ID, "", 2)
	if err != nil || len(page) != 2 {
		t.Fatalf("first page = %d, %v", len(page), err)
	}
	var all []string
	for m, err := range w.c.AllMembers(ctx, w.g.ID) {
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, m.User.Username)
	}
	for _, want := range []string{"alice", "bob", "carol", "dave"} {
		if !slices.Contains(all, want) {
			t.Errorf("AllMembers = %v, missing %s", all, want)
		}
	}
	found, err := w.c.SearchMembers(ctx, w.g.ID, "ca", 10)
	if err != nil || len(found) != 1 || found[0].User.Username != "carol" {
		t.Errorf("search ca = %+v, %v", found, err)
	}
}

func TestMemberRoles(t *testing.T) {
	t.Parallel()
	w := newWorld(t, sim.DefaultFixture())
	ctx := t.Context()
	bob, art := w.g.Member("bob"), w.g.Role("Art")
	if err := w.c.AddMemberRole(ctx, w.g.ID, bob, art, "role menu"); err != nil {
		t.Fatal(err)
	}
	if m, _ := w.c.Member(ctx, w.g.ID, bob); !slices.Contains(m.Roles, art) {
		t.Fatalf("bob's roles = %v, want Art", m.Roles)
	}
	if err := w.c.RemoveMemberRole(ctx, w.g.ID, bob, art, "role menu"); err != nil {
		t.Fatal(err)
	}
	roles := []string{w.g.Role("Gaming")}
	m, err := w.c.ModifyMember(ctx, w.g.ID, bob, rest.MemberEdit{Roles: &roles}, "unique role menu")
	if err != nil || !slices.Equal(m.Roles, roles) {
		t.Errorf("modified = %+v, %v", m, err)
	}
}
