package rolemenu_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/heraldtest"
)

// herald's own highest role decides which roles it may hand out: when
// the owner gives herald a higher role, the next check reads the guild
// again (GUILD_MEMBER_UPDATE of the bot) instead of trusting the
// snapshot that refused the role a moment ago.
func TestRoleMenuBotRoleRaised(t *testing.T) {
	t.Parallel()
	f := fixture()
	f.Roles = append(f.Roles, sim.FixtureRole{Name: "Ops", Permissions: "0", Position: 13})
	h := heraldtest.New(t, heraldtest.WithFixture(f))
	owner := h.As("owner")
	owner.Command("general", "/rolemenu/create", heraldtest.Opts{"name": "vip"}).Reply()
	add := heraldtest.Opts{"menu": "vip", "role": h.Role("Boss")}
	if r := owner.Command("general", "/rolemenu/option/add", add).Reply(); !strings.Contains(r.Content, "at or above herald's highest role") {
		t.Fatalf("adding Boss above herald: %q", r.Content)
	}
	h.Sim.SetMemberRole(h.Guild.ID, h.Guild.BotUserID, h.Role("Ops"), true)
	if r := owner.Command("general", "/rolemenu/option/add", add).Reply(); !strings.Contains(r.Content, "now offers <@&"+h.Role("Boss")+">") {
		t.Errorf("adding Boss once herald sits above it: %q", r.Content)
	}
}

// Every click checks its role again with fresh data (see plan.check):
// a role that gained a dangerous permission, or moved above herald, is
// refused with the reason and nothing is sent to Discord; the owner's
// consent (/rolemenu set dangerous-roles) is read at the click too. The
// rank of the admin who configured the menu is checked when they add the
// role, not at clicks: the menu keeps working after they are demoted.
func TestRoleMenuClickRechecks(t *testing.T) {
	t.Parallel()
	h := heraldtest.New(t, heraldtest.WithFixture(fixture()))
	msg := setup(t, h, "colours", heraldtest.Opts{}, "Red", "Blue", "News")
	erin := h.As("erin")
	refused := func(role, want string) {
		t.Helper()
		r := erin.Click(msg, heraldtest.Button(t, msg, role)).Reply()
		if !strings.Contains(r.Content, "Could not change <@&"+h.Role(role)+">: "+want) {
			t.Errorf("a click on %s: %q, want %q", role, r.Content, want)
		}
		if hasRole(h, "erin", role) || len(memberRoleCalls(h, http.MethodPut, h.Member("erin"), h.Role(role))) != 0 {
			t.Errorf("the refused click on %s changed erin's roles", role)
		}
	}

	// An admin gives Red Manage Messages in Server Settings.
	perms := strconv.FormatInt(discordgo.PermissionManageMessages, 10)
	if res := h.Sim.Do(http.MethodPatch, "/guilds/"+h.Guild.ID+"/roles/"+h.Role("Red"), map[string]string{"permissions": perms}); res.Status != http.StatusOK {
		t.Fatalf("edit Red: %d %s", res.Status, res.Body)
	}
	refused("Red", "**Red** has the dangerous permission **Manage Messages**")

	h.Sim.MoveRole(h.Guild.ID, h.Role("Blue"), 11)
	refused("Blue", "**Blue** is at or above herald's highest role")

	h.Sim.SetMemberRole(h.Guild.ID, h.Member("admin"), h.Role("Admins"), false)
	if r := erin.Click(msg, heraldtest.Button(t, msg, "News")).Reply(); !strings.Contains(r.Content, "Added: <@&"+h.Role("News")+">") || !hasRole(h, "erin", "News") {
		t.Errorf("a click on News after its admin was demoted: %q", r.Content)
	}

	h.As("owner").Command("general", "/rolemenu/set/dangerous-roles", heraldtest.Opts{"allow": true}).Reply()
	if r := erin.Click(msg, heraldtest.Button(t, msg, "Red")).Reply(); !strings.Contains(r.Content, "Added: <@&"+h.Role("Red")+">") || !hasRole(h, "erin", "Red") {
		t.Errorf("a click on Red once the owner allowed dangerous roles: %q", r.Content)
	}
}
