package heraldtest_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/heraldtest"
)

// A role menu served over the Interactions Endpoint URL, end to end: the
// simulator checks herald's endpoint when the URL is saved, a member's
// click is POSTed to herald, signed, herald's fast answer is the HTTP
// response itself, and the River job it enqueued gives the role in the
// simulator. No answer goes through the callback route.
func TestRoleMenuOverHTTP(t *testing.T) {
	t.Parallel()
	f := sim.DefaultFixture()
	f.Roles = append(f.Roles, sim.FixtureRole{Name: "Admins", Permissions: strconv.FormatInt(discordgo.PermissionManageRoles, 10), Position: 9})
	f.Members = append(f.Members, sim.FixtureMember{Username: "admin", Roles: []string{"Admins"}})
	h := heraldtest.New(t, heraldtest.WithFixture(f), heraldtest.OverHTTP())
	admin := h.As("admin")
	admin.Command("general", "/rolemenu/create", heraldtest.Opts{"name": "hobbies"}).Reply()
	admin.Command("general", "/rolemenu/option/add", heraldtest.Opts{"menu": "hobbies", "role": h.Role("Art")}).Reply()
	admin.Command("general", "/rolemenu/publish", heraldtest.Opts{"menu": "hobbies", "channel": h.Channel("roles")}).Reply()
	var menu *discordgo.Message
	h.Eventually("the published menu", func() bool {
		for _, m := range h.Messages(h.Channel("roles")) {
			if strings.HasPrefix(m.Content, "**hobbies**") && len(m.Components) > 0 {
				menu = m
			}
		}
		return menu != nil
	})
	art := menu.Components[0].(*discordgo.ActionsRow).Components[0].(*discordgo.Button).CustomID

	click := h.As("dave").Click(menu, art)
	st := click.Ack()
	if st.AnsweredVia != sim.ViaResponse || st.DeliveryError != "" {
		t.Errorf("the click was answered %+v, want in the HTTP response", st)
	}
	t.Logf("click answered in the HTTP response after %.1f ms (simulator's clock)", *st.AckLatencyMS)
	if reply := click.Reply(); !strings.Contains(reply.Content, "<@&"+h.Role("Art")+">") {
		t.Errorf("reply %q does not name the role", reply.Content)
	}
	h.Eventually("dave to have Art", func() bool {
		for _, m := range h.Sim.Guild(h.Guild.ID).Members {
			if m.ID == h.Member("dave") {
				return slices.Contains(m.Roles, h.Role("Art"))
			}
		}
		return false
	})
	for _, r := range h.Sim.Requests() {
		if strings.HasSuffix(r.Route, "/callback") {
			t.Errorf("an answer went through the callback route: %s %s", r.Method, r.Route)
		}
	}
}
