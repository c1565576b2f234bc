package tickets_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/heraldtest"
	"github.com/herald-bot/herald/internal/interaction"
)

// Thread mode: staff cannot see a private thread until added, so each
// ticket is announced in the notify channel with a Join button. A
// member of the support role who clicks it is added to the thread (one
// PUT); anyone else is refused and added to nothing. The notification
// follows the ticket: the claim names its owner, the close removes the
// button. The welcome still mentions the support role.
func TestJoinTicketFromNotification(t *testing.T) {
	t.Parallel()
	f := fixture()
	f.Channels = append(f.Channels, sim.FixtureChannel{Name: "staff", Type: 0})
	h := heraldtest.New(t, heraldtest.WithFixture(f))
	admin := h.As("admin")
	r := admin.Command("general", "/tickets/setup", heraldtest.Opts{"support-role": h.Role("Helpers"),
		"log-channel": h.Channel("ticket-log"), "notify-channel": h.Channel("staff")}).Reply()
	if !strings.Contains(r.Content, "announced in <#"+h.Channel("staff")+">") {
		t.Fatalf("setup: %q", r.Content)
	}
	admin.Command("general", "/tickets/panel", heraldtest.Opts{"channel": h.Channel("help"), "title": "Help desk"}).Reply()
	ch := openTicket(t, h, "**Help desk**", "bob")
	welcome := message(t, h, ch, "opened ticket #1")
	if !strings.Contains(welcome.Content, "<@&"+h.Role("Helpers")+">") {
		t.Errorf("the welcome does not mention the support role: %q", welcome.Content)
	}
	notice := message(t, h, h.Channel("staff"), "opened ticket #1")
	if !strings.Contains(notice.Content, "<#"+ch+">") || count(h, h.Channel("ticket-log"), "opened ticket") != 0 {
		t.Errorf("notification = %q (or posted in the log channel too)", notice.Content)
	}
	join := heraldtest.Button(t, notice, "Join ticket")

	if r := h.As("carol").Click(notice, join).Reply(); !strings.Contains(r.Content, "Only members with <@&"+h.Role("Helpers")+">") {
		t.Errorf("join by a member without the role: %q", r.Content)
	}
	if r := h.As("sam").Click(notice, join).Reply(); !strings.Contains(r.Content, "You are in ticket #1: <#"+ch+">") {
		t.Errorf("join by staff: %q", r.Content)
	}
	members := thread(h, ch).Members
	if !slices.Contains(members, h.Member("sam")) || slices.Contains(members, h.Member("carol")) {
		t.Errorf("thread members = %v", members)
	}
	if n := h.Succeeded(http.MethodPut, "/channels/{channel_id}/thread-members/{user_id}"); n != 2 {
		t.Errorf("%d thread member adds, want 2 (the opener and sam)", n)
	}

	h.As("tess").Click(welcome, heraldtest.Button(t, welcome, "Claim")).Reply()
	h.Eventually("the notification to name the claim", func() bool {
		return strings.Contains(h.Messages(h.Channel("staff"))[0].Content, "Claimed by <@"+h.Member("tess")+">")
	})
	command(h, "sam", ch, "close", nil).text(t)
	h.Eventually("the thread archived", func() bool { return thread(h, ch).Archived })
	closed := h.Messages(h.Channel("staff"))[0]
	if !strings.Contains(closed.Content, "Closed.") || len(interaction.Buttons(closed)) != 0 {
		t.Errorf("closed notification = %q with %d buttons", closed.Content, len(interaction.Buttons(closed)))
	}
	if n := len(h.Messages(h.Channel("staff"))); n != 1 {
		t.Errorf("%d messages in #staff, want the one notification", n)
	}
}
