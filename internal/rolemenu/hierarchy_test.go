package rolemenu_test

import (
	"strings"
	"testing"

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
