package interaction_test

import (
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/i18n"
	"github.com/herald-bot/herald/internal/interaction"
)

func catalog(t *testing.T) *i18n.Catalog {
	t.Helper()
	c, err := i18n.Shipped()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// member builds a guild interaction of a member with perms, in lang.
func member(t *testing.T, lang string, perms int64) *interaction.Interaction {
	return &interaction.Interaction{
		Interaction: &discordgo.Interaction{Type: discordgo.InteractionApplicationCommand, GuildID: "1",
			Member: &discordgo.Member{User: &discordgo.User{ID: "42"}, Permissions: perms}},
		Path: "/tickets/open", Localizer: catalog(t).For(lang, ""), Received: time.Now(),
	}
}

func content(t *testing.T, h interaction.Handler, in *interaction.Interaction) string {
	t.Helper()
	r, err := h(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	return r.Data.Content
}

func TestGuildOnly(t *testing.T) {
	t.Parallel()
	h := interaction.GuildOnly(respond("ok"))
	if got := content(t, h, member(t, "en", 0)); got != "ok" {
		t.Errorf("in a guild: %q", got)
	}
	dm := member(t, "fr", 0)
	dm.GuildID, dm.Member, dm.User = "", nil, &discordgo.User{ID: "42"}
	if got := content(t, h, dm); !strings.Contains(got, "serveur") {
		t.Errorf("in a DM: %q, want the French refusal", got)
	}
}

// The permission comes from the payload's computed permissions;
// Administrator implies every one; the refusal names it in the member's
// language.
func TestRequirePermission(t *testing.T) {
	t.Parallel()
	h := interaction.RequirePermission(discordgo.PermissionManageRoles)(respond("ok"))
	for _, perms := range []int64{discordgo.PermissionManageRoles, discordgo.PermissionAdministrator} {
		if got := content(t, h, member(t, "en", perms)); got != "ok" {
			t.Errorf("perms %d: %q", perms, got)
		}
	}
	if got := content(t, h, member(t, "de", discordgo.PermissionManageGuild)); !strings.Contains(got, "Rollen verwalten") {
		t.Errorf("refusal = %q, want the German permission name", got)
	}
	if _, ok := requirePermission(discordgo.PermissionCreateInstantInvite); ok {
		t.Error("a permission without a localized name must panic at registration")
	}
}

// Every permission RequirePermission accepts is named in the refusal in
// every language. A name missing from en would show as its raw key, and
// i18n's shipped tests hold every language to en's keys.
func TestPermissionNamesAreLocalized(t *testing.T) {
	t.Parallel()
	accepted := 0
	for bit := range 63 {
		perm := int64(1) << bit
		mw, ok := requirePermission(perm)
		if !ok {
			continue
		}
		accepted++
		h := mw(respond("ok"))
		for _, lang := range catalog(t).Languages() {
			if got := content(t, h, member(t, lang, 0)); strings.Contains(got, "permission.") {
				t.Errorf("permission %d in %s: %q names the raw key", perm, lang, got)
			}
		}
	}
	if accepted == 0 {
		t.Fatal("RequirePermission accepted no permission at all")
	}
}

// requirePermission is RequirePermission, reporting its panic for a
// permission it cannot name as false.
func requirePermission(perm int64) (mw interaction.Middleware, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return interaction.RequirePermission(perm), true
}

// A member may use a guarded route once per cooldown, per route and
// guild; the refusal says how long is left, in seconds rounded up.
func TestCooldown(t *testing.T) {
	t.Parallel()
	h := interaction.Cooldown(30 * time.Second)(respond("ok"))
	first := member(t, "en", 0)
	if got := content(t, h, first); got != "ok" {
		t.Fatalf("first use: %q", got)
	}
	again := member(t, "en", 0)
	again.Received = first.Received.Add(10*time.Second + time.Millisecond)
	if got := content(t, h, again); !strings.Contains(got, "20 seconds") {
		t.Errorf("within the cooldown: %q, want 20 seconds left", got)
	}
	other := member(t, "en", 0)
	other.Member.User.ID = "43"
	other.Received = again.Received
	if got := content(t, h, other); got != "ok" {
		t.Errorf("another member: %q", got)
	}
	later := member(t, "en", 0)
	later.Received = first.Received.Add(30 * time.Second)
	if got := content(t, h, later); got != "ok" {
		t.Errorf("after the cooldown: %q", got)
	}
	auto := member(t, "en", 0)
	auto.Type = discordgo.InteractionApplicationCommandAutocomplete
	auto.Received = later.Received
	if got := content(t, h, auto); got != "ok" {
		t.Errorf("autocomplete is not limited: %q", got)
	}
}

func TestOptions(t *testing.T) {
	t.Parallel()
	str, role := discordgo.ApplicationCommandOptionString, discordgo.ApplicationCommandOptionRole
	i := command("rolemenu", sub(discordgo.ApplicationCommandOptionSubCommandGroup, "option",
		sub(discordgo.ApplicationCommandOptionSubCommand, "add",
			&discordgo.ApplicationCommandInteractionDataOption{Type: str, Name: "menu", Value: "colours", Focused: true},
			&discordgo.ApplicationCommandInteractionDataOption{Type: role, Name: "role", Value: "7"},
			&discordgo.ApplicationCommandInteractionDataOption{Type: discordgo.ApplicationCommandOptionInteger, Name: "max", Value: float64(3)},
			&discordgo.ApplicationCommandInteractionDataOption{Type: discordgo.ApplicationCommandOptionUser, Name: "who", Value: "42"},
		)))
	d := i.Data.(discordgo.ApplicationCommandInteractionData)
	d.Resolved = &discordgo.ApplicationCommandInteractionDataResolved{
		Roles:   map[string]*discordgo.Role{"7": {ID: "7", Name: "Red"}},
		Users:   map[string]*discordgo.User{"42": {ID: "42", Username: "bob"}},
		Members: map[string]*discordgo.Member{"42": {Nick: "Bobby"}},
	}
	i.Data = d
	o := (&interaction.Interaction{Interaction: i}).Options()
	if o.String("menu") != "colours" || o.String("absent") != "" {
		t.Errorf("strings: %q %q", o.String("menu"), o.String("absent"))
	}
	if n, ok := o.Int("max"); !ok || n != 3 {
		t.Errorf("max = %d, %v", n, ok)
	}
	if r, ok := o.Role("role"); !ok || r.Name != "Red" {
		t.Errorf("role = %+v, %v", r, ok)
	}
	if u, m, ok := o.User("who"); !ok || u.Username != "bob" || m.Nick != "Bobby" || m.User != u {
		t.Errorf("user = %+v %+v %v", u, m, ok)
	}
	if _, ok := o.Channel("role"); ok {
		t.Error("a role option read as a channel")
	}
	if name, value := o.Focused(); name != "menu" || value != "colours" {
		t.Errorf("focused = %q %q", name, value)
	}
}

// Limit lets a few quick uses through and refuses the next until the
// oldest of them is d old.
func TestLimitAllowsABurst(t *testing.T) {
	t.Parallel()
	h := interaction.Limit(3, 10*time.Second)(respond("ok"))
	start := member(t, "en", 0).Received
	at := func(after time.Duration) string {
		in := member(t, "en", 0)
		in.Received = start.Add(after)
		return content(t, h, in)
	}
	for i := range 3 {
		if got := at(time.Duration(i) * time.Second); got != "ok" {
			t.Fatalf("use %d: %q", i+1, got)
		}
	}
	if got := at(4 * time.Second); !strings.Contains(got, "6 seconds") {
		t.Errorf("fourth use within 10 s: %q, want 6 seconds left", got)
	}
	if got := at(10 * time.Second); got != "ok" {
		t.Errorf("once the first use is 10 s old: %q", got)
	}
}
