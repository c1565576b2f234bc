package tickets_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/heraldtest"
	"github.com/herald-bot/herald/internal/interaction"
)

// An admin sets tickets up and publishes a panel; topics become buttons
// in one edit; bad input is refused in the admin's language and changes
// nothing; members without Manage Server cannot configure tickets.
func TestSetupAndPanel(t *testing.T) {
	t.Parallel()
	h := heraldtest.New(t, heraldtest.WithFixture(fixture()))
	admin := h.As("admin")

	if r := h.As("bob").Command("general", "/tickets/setup", heraldtest.Opts{"support-role": h.Role("Helpers")}).Reply(); !strings.Contains(r.Content, "Manage Server") {
		t.Errorf("setup by a member: %q", r.Content)
	}
	if r := admin.Command("general", "/tickets/panel", heraldtest.Opts{"channel": h.Channel("help")}).Reply(); !strings.Contains(r.Content, "not set up") {
		t.Errorf("panel before setup: %q", r.Content)
	}
	if r := admin.Command("general", "/tickets/setup", heraldtest.Opts{"support-role": h.Guild.ID}).Reply(); !strings.Contains(r.Content, "Nothing was changed") {
		t.Errorf("setup with @everyone: %q", r.Content)
	}
	if r := admin.Locale("de").Command("general", "/tickets/setup", heraldtest.Opts{"support-role": h.Role("Helpers"), "category": h.Channel("Support")}).Reply(); !strings.Contains(r.Content, "Kanal-Modus") {
		t.Errorf("a category in thread mode (German): %q", r.Content)
	}
	var rows int
	h.DB.QueryRow(t.Context(), `SELECT count(*) FROM ticket_settings`).Scan(&rows)
	if rows != 0 {
		t.Fatalf("refused setups saved %d rows", rows)
	}

	panel := setup(t, h, heraldtest.Opts{"log-channel": h.Channel("ticket-log")})
	if b := interaction.Buttons(panel); len(b) != 1 || b[0].Label != "Open ticket" {
		t.Fatalf("panel buttons = %+v", b)
	}
	var id string
	h.DB.QueryRow(t.Context(), `SELECT id::text FROM ticket_panels`).Scan(&id)
	edits := h.Succeeded(http.MethodPatch, "/channels/{channel_id}/messages/{message_id}")
	for _, label := range []string{"Billing", "Bugs"} {
		if r := admin.Command("general", "/tickets/topic/add", heraldtest.Opts{"panel": id, "label": label}).Reply(); !strings.Contains(r.Content, "now offers") {
			t.Fatalf("topic add %s: %q", label, r.Content)
		}
	}
	if r := admin.Command("general", "/tickets/topic/add", heraldtest.Opts{"panel": "999", "label": "Other"}).Reply(); !strings.Contains(r.Content, "no panel") {
		t.Errorf("topic on an unknown panel: %q", r.Content)
	}
	h.Eventually("the panel to show both topics", func() bool {
		m := message(t, h, h.Channel("help"), "**Help desk**")
		return len(interaction.Buttons(m)) == 2 && interaction.Buttons(m)[1].Label == "Bugs"
	})
	if n := h.Succeeded(http.MethodPatch, "/channels/{channel_id}/messages/{message_id}") - edits; n != 1 {
		t.Errorf("two topics made %d panel edits, want 1", n)
	}
	if n := len(h.Messages(h.Channel("help"))); n != 1 {
		t.Errorf("%d messages in #help, want the one panel", n)
	}
}

// A double click opens exactly one private thread; the opener is in it,
// the welcome message pings the support role and carries Close and Claim,
// and the member's reply links to it. The limit and the cooldown are
// checked on the next clicks.
func TestOpenThreadOnce(t *testing.T) {
	t.Parallel()
	h := heraldtest.New(t, heraldtest.WithFixture(fixture()))
	panel := setup(t, h, heraldtest.Opts{})
	open := heraldtest.Button(t, panel, "Open ticket")

	bob := h.As("bob")
	first, second := bob.Click(panel, open), bob.Click(panel, open)
	// Either click may take the member's lock first.
	link, other := first.Reply(), second.Reply()
	if strings.Contains(other.Content, "is open") {
		link, other = other, link
	}
	if !strings.Contains(link.Content, "Your ticket #1 is open") {
		t.Fatalf("the winning click: %q", link.Content)
	}
	if !strings.Contains(other.Content, "being opened") && !strings.Contains(other.Content, "limit") {
		t.Errorf("the other click: %q", other.Content)
	}
	thread := ticketChannel(t, link)
	g := h.Sim.Guild(h.Guild.ID)
	if len(g.Threads) != 1 || g.Threads[0].ID != thread || g.Threads[0].Type != int(discordgo.ChannelTypeGuildPrivateThread) ||
		!slices.Contains(g.Threads[0].Members, h.Member("bob")) || g.Threads[0].Name != "ticket-0001" {
		t.Fatalf("threads = %+v", g.Threads)
	}
	welcome := message(t, h, thread, "opened ticket #1")
	if !strings.Contains(welcome.Content, "<@&"+h.Role("Helpers")+">") || len(interaction.Buttons(welcome)) != 2 {
		t.Errorf("welcome = %q with %d buttons", welcome.Content, len(interaction.Buttons(welcome)))
	}
	var tickets int
	h.DB.QueryRow(t.Context(), `SELECT count(*) FROM tickets`).Scan(&tickets)
	if tickets != 1 {
		t.Fatalf("%d tickets after a double click, want 1", tickets)
	}

	// The limit (1) names the open ticket; with a limit of 2, the cooldown.
	if r := bob.Click(panel, open).Reply(); !strings.Contains(r.Content, "limit of open tickets (1): <#"+thread+">") {
		t.Errorf("click over the limit: %q", r.Content)
	}
	if r := h.As("admin").Command("general", "/tickets/settings", heraldtest.Opts{"limit": 2, "cooldown": 600}).Reply(); !strings.Contains(r.Content, "at most 2 open") {
		t.Fatalf("settings: %q", r.Content)
	}
	if r := bob.Locale("fr").Click(panel, open).Reply(); !strings.Contains(r.Content, "Tu pourras ouvrir un autre ticket dans") {
		t.Errorf("click in the cooldown (French): %q", r.Content)
	}
	if n := h.Succeeded(http.MethodPost, "/channels/{channel_id}/threads"); n != 1 {
		t.Errorf("%d threads created, want 1", n)
	}
}

// Channel mode: ticket channels are private to the opener, the support
// role and herald; a full category overflows into a new one; at
// Discord's 500-channel cap the member gets a clear error, the ticket is
// marked failed and nothing is left behind.
func TestChannelModeOverflowAndCap(t *testing.T) {
	t.Parallel()
	f := fixture()
	f.Channels = append(f.Channels, sim.FixtureChannel{Name: "Tickets", Type: 4})
	for i := range 49 {
		f.Channels = append(f.Channels, sim.FixtureChannel{Name: "old-" + string(rune('a'+i%26)) + string(rune('a'+i/26)), Type: 0, Parent: "Tickets"})
	}
	h := heraldtest.New(t, heraldtest.WithFixture(f))
	panel := setup(t, h, heraldtest.Opts{"mode": "channel", "category": h.Channel("Tickets")})
	open := heraldtest.Button(t, panel, "Open ticket")

	first := ticketChannel(t, h.As("bob").Click(panel, open).Reply())
	second := ticketChannel(t, h.As("carol").Click(panel, open).Reply())
	g := h.Sim.Guild(h.Guild.ID)
	parents := map[string]string{}
	names := map[string]string{}
	for _, c := range g.Channels {
		parents[c.ID], names[c.ID] = c.ParentID, c.Name
	}
	if parents[first] != h.Channel("Tickets") {
		t.Errorf("first ticket in %q, want the Tickets category", names[parents[first]])
	}
	if names[parents[second]] != "Tickets 2" {
		t.Errorf("second ticket in %q, want the overflow category Tickets 2", names[parents[second]])
	}
	res := h.Sim.Do(http.MethodGet, "/channels/"+first, nil)
	var ch discordgo.Channel
	res.JSON(t, &ch)
	allowed := map[string]bool{}
	for _, o := range ch.PermissionOverwrites {
		if o.Allow&discordgo.PermissionViewChannel != 0 {
			allowed[o.ID] = true
		}
		if o.ID == h.Guild.ID && o.Deny&discordgo.PermissionViewChannel == 0 {
			t.Error("@everyone can see the ticket channel")
		}
	}
	if !allowed[h.Member("bob")] || !allowed[h.Role("Helpers")] || !allowed[h.Guild.BotUserID] || allowed[h.Member("carol")] {
		t.Errorf("view allowed for %v", allowed)
	}

	// Fill the guild up to Discord's cap (lifting the simulator's limits
	// for the test's own requests), then open one more.
	h.Sim.SetLimits(sim.LimitChange{Route: "POST /guilds/{guild_id}/channels", Limit: 1000, WindowMS: 1000})
	h.Sim.SetLimits(sim.LimitChange{Global: 1000})
	for len(h.Sim.Guild(h.Guild.ID).Channels) < 500 {
		if r := h.Sim.Do(http.MethodPost, "/guilds/"+h.Guild.ID+"/channels", map[string]any{"name": "filler"}); r.Status != http.StatusCreated {
			t.Fatalf("filler: %d %s", r.Status, r.Body)
		}
	}
	if r := h.As("dave").Click(panel, open).Reply(); !strings.Contains(r.Content, "500 channels") {
		t.Errorf("open at the cap: %q", r.Content)
	}
	var status, reason string
	h.DB.QueryRow(t.Context(), `SELECT status, fail_reason FROM tickets WHERE number = 3`).Scan(&status, &reason)
	if status != "failed" || reason != "guild_full" {
		t.Errorf("ticket at the cap: %s (%s)", status, reason)
	}
	if n := len(h.Sim.Guild(h.Guild.ID).Channels); n != 500 {
		t.Errorf("%d channels, want 500", n)
	}
}

// Opening records each step as done: an attempt cut off by its timeout
// while posting the welcome (Discord slow to answer) is followed by one
// that posts it without adding the opener to the thread again.
func TestOpenGoesOnAtItsStep(t *testing.T) {
	t.Parallel()
	h := heraldtest.New(t, heraldtest.WithFixture(fixture()),
		heraldtest.WithEnv(map[string]string{"HERALD_JOB_TIMEOUT": "interactive=1m,events=5s,sync=2m,background=2m"}))
	panel := setup(t, h, heraldtest.Opts{"log-channel": h.Channel("ticket-log")})
	const route = "POST /channels/{channel_id}/messages"
	// The attempt has 5 s for the thread and the opener, however loaded
	// the machine, and is cut off on the welcome, which takes 10.
	h.Sim.SetFault(sim.Fault{Route: route, LatencyMS: 10000})
	h.As("bob").Click(panel, heraldtest.Button(t, panel, "Open ticket"))
	h.Eventually("an attempt cut off", func() bool {
		n := 0
		h.DB.QueryRow(t.Context(), `SELECT count(*) FROM river_job WHERE kind = 'tickets_open' AND errors IS NOT NULL`).Scan(&n)
		return n > 0
	})
	h.Sim.SetFault(sim.Fault{Route: route, Clear: true})
	h.Eventually("the ticket open", func() bool {
		var status string
		h.DB.QueryRow(t.Context(), `SELECT status FROM tickets`).Scan(&status)
		return status == "open"
	})
	if n := h.Succeeded(http.MethodPut, "/channels/{channel_id}/thread-members/{user_id}"); n != 1 {
		t.Errorf("the opener was added %d times, want once", n)
	}
	var step int
	h.DB.QueryRow(t.Context(), `SELECT open_step FROM tickets`).Scan(&step)
	if step != 3 {
		t.Errorf("open_step %d, want 3 (member, welcome, notice)", step)
	}
}

// A close asked for while the ticket is still being opened (Discord slow
// to take its welcome) is taken, not refused: the ticket closes, with
// its transcript, once the open job is done.
func TestCloseWhileOpening(t *testing.T) {
	t.Parallel()
	h := heraldtest.New(t, heraldtest.WithFixture(fixture()))
	panel := setup(t, h, heraldtest.Opts{"log-channel": h.Channel("ticket-log")})
	const route = "POST /channels/{channel_id}/messages"
	h.Sim.SetFault(sim.Fault{Route: route, LatencyMS: 1500})
	h.As("bob").Click(panel, heraldtest.Button(t, panel, "Open ticket"))
	var th string
	// The thread exists, and herald has recorded it: a command in a
	// thread herald has not recorded yet is "not a ticket".
	h.Eventually("the ticket's thread, recorded", func() bool {
		for _, x := range h.Sim.Guild(h.Guild.ID).Threads {
			th = x.ID
		}
		var recorded bool
		h.DB.QueryRow(t.Context(), `SELECT EXISTS (SELECT 1 FROM tickets WHERE channel_id = $1)`, th).Scan(&recorded)
		return th != "" && recorded
	})
	if r := command(h, "sam", th, "close", map[string]any{"reason": "sorted already"}).text(t); !strings.Contains(r, "once it is open") {
		t.Fatalf("close while opening: %q", r)
	}
	h.Sim.SetFault(sim.Fault{Route: route, Clear: true})
	h.Eventually("the ticket closed", func() bool {
		var status string
		h.DB.QueryRow(t.Context(), `SELECT status FROM tickets`).Scan(&status)
		return status == "closed"
	})
	if n := count(h, th, "opened ticket #1"); n != 1 {
		t.Errorf("%d welcomes, want 1", n)
	}
	if n := count(h, h.Channel("ticket-log"), "Transcript of ticket #1"); n != 1 {
		t.Errorf("%d transcripts, want 1", n)
	}
	if !thread(h, th).Archived {
		t.Error("the thread is not archived")
	}
}
