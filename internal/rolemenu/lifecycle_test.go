package rolemenu_test

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/heraldtest"
	"github.com/herald-bot/herald/internal/interaction"
)

// memberRoleCalls are the requests that add (PUT) or remove (DELETE) a
// role on a member, in order.
func memberRoleCalls(h *heraldtest.Herald, method, member, role string) []sim.RequestRecord {
	path := "/guilds/" + h.Guild.ID + "/members/" + member + "/roles/" + role
	var out []sim.RequestRecord
	for _, r := range h.Sim.Server.Requests() {
		if r.Method == method && r.Path == path {
			out = append(out, r)
		}
	}
	return out
}

// status is the admin's /rolemenu status.
func status(h *heraldtest.Herald) string {
	return h.As("admin").Command("general", "/rolemenu/status", nil).Reply().Content
}

// A member clicking faster than the cooldown allows gets the cooldown's
// answer for the extra click, which changes nothing: five toggles leave
// the role on, where a sixth would have taken it off again. The limit
// is per member.
func TestRoleMenuClickCooldown(t *testing.T) {
	t.Parallel()
	h := heraldtest.New(t, heraldtest.WithFixture(fixture()))
	msg := setup(t, h, "pings", heraldtest.Opts{}, "News")
	news := heraldtest.Button(t, msg, "News")

	var clicks []heraldtest.Sent
	for range 6 {
		clicks = append(clicks, h.As("erin").Click(msg, news))
	}
	accepted, refused := 0, 0
	for _, c := range clicks {
		st := c.Ack()
		reply := c.Reply().Content // a deferred click's once its job filled it
		switch {
		case st.AckType == int(discordgo.InteractionResponseDeferredChannelMessageWithSource):
			accepted++
		case strings.Contains(reply, "You can do this again in"):
			refused++
		default:
			t.Errorf("a click answered %d %q", st.AckType, reply)
		}
	}
	if accepted != 5 || refused != 1 {
		t.Fatalf("%d clicks taken and %d refused, want 5 and 1", accepted, refused)
	}
	adds := len(memberRoleCalls(h, http.MethodPut, h.Member("erin"), h.Role("News")))
	removes := len(memberRoleCalls(h, http.MethodDelete, h.Member("erin"), h.Role("News")))
	if !hasRole(h, "erin", "News") || adds-removes != 1 || adds+removes > 5 {
		t.Errorf("after five toggles: has News %v, %d adds and %d removes; want it on, one add more than removes, at most 5 changes",
			hasRole(h, "erin", "News"), adds, removes)
	}
	if r := h.As("dave").Click(msg, news).Reply(); !strings.Contains(r.Content, "Added: <@&"+h.Role("News")+">") {
		t.Errorf("another member's click during erin's cooldown: %q", r.Content)
	}
}

// A role deleted in the guild shows in the status; a click on its button
// changes nothing and says why; the next publish leaves it out of the
// message, and the status no longer names it.
func TestRoleMenuRoleDeleted(t *testing.T) {
	t.Parallel()
	h := heraldtest.New(t, heraldtest.WithFixture(fixture()))
	msg := setup(t, h, "colours", heraldtest.Opts{}, "Red", "Blue")
	red := h.Role("Red")

	if res := h.Sim.Do(http.MethodDelete, "/guilds/"+h.Guild.ID+"/roles/"+red, nil); res.Status != http.StatusNoContent {
		t.Fatalf("delete the role: %d %s", res.Status, res.Body)
	}
	h.Eventually("status to name the deleted role", func() bool {
		return strings.Contains(status(h), "a role it offers (<@&"+red+">) was deleted")
	})
	want := "Could not change <@&" + red + ">: the role <@&" + red + "> was deleted."
	if r := h.As("frank").Click(msg, heraldtest.Button(t, msg, "Red")).Reply(); !strings.Contains(r.Content, want) {
		t.Errorf("a click on the deleted role's button: %q, want %q", r.Content, want)
	}
	if n := len(memberRoleCalls(h, http.MethodPut, h.Member("frank"), red)); n != 0 {
		t.Errorf("the click on a deleted role sent %d role adds", n)
	}

	h.As("admin").Command("general", "/rolemenu/option/edit", heraldtest.Opts{"menu": "colours", "role": h.Role("Blue"), "label": "Navy"}).Reply()
	menuMessage(t, h, "roles", "colours", func(m *discordgo.Message) bool {
		b := interaction.Buttons(m)
		return len(b) == 1 && b[0].Label == "Navy"
	})
	h.Eventually("status to show the menu published without the role", func() bool {
		s := status(h)
		return strings.Contains(s, ": published") && !strings.Contains(s, "was deleted")
	})
}

// While herald is down its channel and another menu's message are
// deleted: no gateway event tells it, so the status still says
// published; the next publish of each finds Discord's Unknown Channel
// (10003) and Unknown Message (10008), the status names what is gone and
// the fix, and nothing is posted again until an admin republishes.
func TestRoleMenuTargetsDeletedWhileDown(t *testing.T) {
	t.Parallel()
	h := heraldtest.New(t, heraldtest.WithFixture(fixture()))
	admin := h.As("admin")
	colours := setup(t, h, "colours", heraldtest.Opts{}, "Red")
	admin.Command("general", "/rolemenu/create", heraldtest.Opts{"name": "pings"}).Reply()
	admin.Command("general", "/rolemenu/option/add", heraldtest.Opts{"menu": "pings", "role": h.Role("News")}).Reply()
	admin.Command("general", "/rolemenu/publish", heraldtest.Opts{"menu": "pings", "channel": h.Channel("general")}).Reply()
	pings := menuMessage(t, h, "general", "pings", nil)
	posts := h.Requests(http.MethodPost, "/channels/{channel_id}/messages")

	h.Stop()
	if res := h.Sim.Do(http.MethodDelete, "/channels/"+h.Channel("roles"), nil); res.Status != http.StatusOK {
		t.Fatalf("delete #roles: %d %s", res.Status, res.Body)
	}
	if res := h.Sim.Do(http.MethodDelete, "/channels/"+pings.ChannelID+"/messages/"+pings.ID, nil); res.Status != http.StatusNoContent {
		t.Fatalf("delete the pings message: %d %s", res.Status, res.Body)
	}
	h.Start()
	if s := status(h); strings.Count(s, ": published") != 2 {
		t.Fatalf("status before any publish: %q, want both still published (herald missed the events)", s)
	}

	for _, m := range []struct{ name, role string }{{"colours", "Red"}, {"pings", "News"}} {
		admin.Command("general", "/rolemenu/option/edit", heraldtest.Opts{"menu": m.name, "role": h.Role(m.role), "label": "Edited"}).Reply()
	}
	h.Eventually("status to show the channel and the message gone", func() bool {
		s := status(h)
		return strings.Contains(statusLine(s, "colours"), "failed: its channel was deleted. Fix: `/rolemenu move menu:colours`") &&
			strings.Contains(statusLine(s, "pings"), "failed: its message was deleted. Fix: `/rolemenu republish menu:pings`")
	})
	for _, m := range []*discordgo.Message{colours, pings} {
		if n := failedEdits(h, m); n != 1 {
			t.Errorf("%d edits of %s answered 404, want 1", n, m.Content)
		}
	}
	if n := h.Requests(http.MethodPost, "/channels/{channel_id}/messages"); n != posts {
		t.Errorf("%d messages posted after the restart, want none until republished", n-posts)
	}

	admin.Command("general", "/rolemenu/republish", heraldtest.Opts{"menu": "pings"}).Reply()
	menuMessage(t, h, "general", "pings", func(m *discordgo.Message) bool { return firstLabel(m) == "Edited" })
}

// statusLine is the line of the status that names menu.
func statusLine(status, menu string) string {
	for line := range strings.Lines(status) {
		if strings.HasPrefix(line, "**"+menu+"**") {
			return line
		}
	}
	return ""
}

func firstLabel(m *discordgo.Message) string {
	if b := interaction.Buttons(m); len(b) > 0 {
		return b[0].Label
	}
	return ""
}

// failedEdits counts the edits of m that Discord answered 404.
func failedEdits(h *heraldtest.Herald, m *discordgo.Message) int {
	n := 0
	for _, r := range h.Sim.Server.Requests() {
		if r.Method == http.MethodPatch && r.Path == "/channels/"+m.ChannelID+"/messages/"+m.ID && r.Status == http.StatusNotFound {
			n++
		}
	}
	return n
}

var waitingUntil = regexp.MustCompile(`waiting until <t:(\d+):T>`)

// Discord answers the menu's message edit 429 with a wait of seconds: the
// status shows the menu waiting until the time Discord named, herald
// sends the edit once more when it is over, and the status turns to
// published.
func TestRoleMenuStatusWhileRateLimited(t *testing.T) {
	t.Parallel()
	h := heraldtest.New(t, heraldtest.WithFixture(fixture()))
	admin := h.As("admin")
	setup(t, h, "colours", heraldtest.Opts{}, "Red", "Blue")
	const edit = "/channels/{channel_id}/messages/{message_id}"
	edited := func(label string) heraldtest.Opts {
		return heraldtest.Opts{"menu": "colours", "role": h.Role("Red"), "label": label}
	}

	admin.Command("general", "/rolemenu/option/edit", edited("Red 1")).Reply()
	h.Eventually("the first edit", func() bool { return h.Requests(http.MethodPatch, edit) == 1 })
	first := lastRequest(h, http.MethodPatch, edit)
	// Discord lowers the limit to one edit per 8 s: the next edit, in the
	// window the first one opened, is answered 429 for the rest of it.
	const window = 8 * time.Second
	h.Sim.SetLimits(sim.LimitChange{Route: http.MethodPatch + " " + edit, Limit: 1, WindowMS: window.Milliseconds()})
	admin.Command("general", "/rolemenu/option/edit", edited("Red 2")).Reply()

	var until int64
	h.Eventually("status to show the menu waiting", func() bool {
		m := waitingUntil.FindStringSubmatch(status(h))
		if m != nil {
			until, _ = strconv.ParseInt(m[1], 10, 64)
		}
		return m != nil
	})
	limited := lastRequest(h, http.MethodPatch, edit)
	if limited.Status != http.StatusTooManyRequests {
		t.Fatalf("the edit herald waits for was answered %d, want 429", limited.Status)
	}
	if reset := first.Time.Add(window); until < limited.Time.Unix() || until > reset.Unix()+1 {
		t.Errorf("waiting until %s; the 429 came at %s and its window ends at %s",
			time.Unix(until, 0).Format(time.TimeOnly), limited.Time.Format(time.TimeOnly), reset.Format(time.TimeOnly))
	}

	menuMessage(t, h, "roles", "colours", func(m *discordgo.Message) bool { return firstLabel(m) == "Red 2" })
	h.Eventually("status to show the menu published", func() bool { return strings.Contains(status(h), ": published") })
	n := 0
	for _, r := range h.Sim.Server.Requests() {
		if r.Route == edit && r.Status == http.StatusTooManyRequests {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d edits answered 429, want 1: herald waits for the time Discord names", n)
	}
}

func lastRequest(h *heraldtest.Herald, method, route string) sim.RequestRecord {
	var last sim.RequestRecord
	for _, r := range h.Sim.Server.Requests() {
		if r.Method == method && r.Route == route {
			last = r
		}
	}
	return last
}
