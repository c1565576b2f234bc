package tickets_test

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/heraldtest"
)

// herald may not create private threads: the member is told which
// permission is missing, the ticket is marked failed with the reason and
// nothing is left behind; once an admin gives herald's role that
// permission, the next click opens the ticket.
func TestOpenWithoutPermission(t *testing.T) {
	t.Parallel()
	f := fixture()
	var base int64 = discordgo.PermissionViewChannel | discordgo.PermissionSendMessages | discordgo.PermissionReadMessageHistory |
		discordgo.PermissionEmbedLinks | discordgo.PermissionAttachFiles
	f.Everyone = strconv.FormatInt(discordgo.PermissionViewChannel|discordgo.PermissionSendMessages|
		discordgo.PermissionReadMessageHistory|discordgo.PermissionUseApplicationCommands, 10)
	f.BotRole = &sim.FixtureRole{Name: "herald", Position: 8, Permissions: strconv.FormatInt(base, 10)}
	f.Roles = append(f.Roles, sim.FixtureRole{Name: "Threads", Position: 7,
		Permissions: strconv.FormatInt(discordgo.PermissionCreatePrivateThreads|discordgo.PermissionSendMessagesInThreads|discordgo.PermissionManageThreads, 10)})
	h := heraldtest.New(t, heraldtest.WithFixture(f))
	panel := setup(t, h, heraldtest.Opts{"log-channel": h.Channel("ticket-log")})

	r := h.As("erin").Click(panel, heraldtest.Button(t, panel, "Open ticket")).Reply()
	if !strings.Contains(r.Content, "Create Private Threads") {
		t.Fatalf("the member was told %q, want the missing permission named", r.Content)
	}
	var status, reason string
	if err := h.DB.QueryRow(t.Context(), `SELECT status, COALESCE(fail_reason, '') FROM tickets`).Scan(&status, &reason); err != nil {
		t.Fatal(err)
	}
	if status != "failed" || reason != "needs_permission" {
		t.Errorf("ticket %s (%s), want failed for a permission", status, reason)
	}
	if n := len(h.Sim.Guild(h.Guild.ID).Threads); n != 0 {
		t.Errorf("%d threads left behind", n)
	}

	h.Sim.SetMemberRole(h.Guild.ID, h.Guild.BotUserID, h.Role("Threads"), true)
	r = h.As("erin").Click(panel, heraldtest.Button(t, panel, "Open ticket")).Reply()
	if !strings.Contains(r.Content, "<#") {
		t.Fatalf("after the fix the member was told %q, want a link to the ticket", r.Content)
	}
	if n := len(h.Sim.Guild(h.Guild.ID).Threads); n != 1 {
		t.Errorf("%d threads after the fix, want the ticket's one", n)
	}
	if n := h.Succeeded(http.MethodPost, "/channels/{channel_id}/threads"); n > 2 {
		t.Errorf("%d thread creates for one refused and one opened ticket", n)
	}
}

// Creating a private thread takes Create Private Threads, but adding the
// opener to one members cannot invite to takes Manage Threads (Discord's
// Channel resource: thread-members, invitable). herald with the first and
// not the second tells the member that Manage Threads is missing, and
// leaves no active thread behind (deleting a thread takes Manage Threads
// too: it archives the empty thread instead); with the permission, the
// next click opens the ticket.
func TestOpenWithoutManageThreads(t *testing.T) {
	t.Parallel()
	f := fixture()
	var base int64 = discordgo.PermissionViewChannel | discordgo.PermissionSendMessages | discordgo.PermissionReadMessageHistory |
		discordgo.PermissionEmbedLinks | discordgo.PermissionAttachFiles | discordgo.PermissionCreatePrivateThreads |
		discordgo.PermissionSendMessagesInThreads
	f.BotRole = &sim.FixtureRole{Name: "herald", Position: 8, Permissions: strconv.FormatInt(base, 10)}
	f.Roles = append(f.Roles, sim.FixtureRole{Name: "Moderation", Position: 7, Permissions: strconv.FormatInt(discordgo.PermissionManageThreads, 10)})
	h := heraldtest.New(t, heraldtest.WithFixture(f))
	panel := setup(t, h, heraldtest.Opts{"log-channel": h.Channel("ticket-log")})

	r := h.As("erin").Click(panel, heraldtest.Button(t, panel, "Open ticket")).Reply()
	if !strings.Contains(r.Content, "**Manage Threads**") || strings.Contains(r.Content, "Create Private Threads") {
		t.Fatalf("the member was told %q, want Manage Threads named", r.Content)
	}
	var status, reason string
	if err := h.DB.QueryRow(t.Context(), `SELECT status, fail_reason FROM tickets`).Scan(&status, &reason); err != nil {
		t.Fatal(err)
	}
	if status != "failed" || reason != "needs_thread_members" {
		t.Errorf("ticket %s (%s), want failed adding the opener", status, reason)
	}
	for _, th := range h.Sim.Guild(h.Guild.ID).Threads {
		if !th.Archived || slices.Contains(th.Members, h.Member("erin")) {
			t.Errorf("thread left behind: %+v", th)
		}
	}

	h.Sim.SetMemberRole(h.Guild.ID, h.Guild.BotUserID, h.Role("Moderation"), true)
	if r := h.As("erin").Click(panel, heraldtest.Button(t, panel, "Open ticket")).Reply(); !strings.Contains(r.Content, "<#") {
		t.Fatalf("after the fix the member was told %q, want a link to the ticket", r.Content)
	}
}
