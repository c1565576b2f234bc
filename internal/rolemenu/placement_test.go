package rolemenu_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/heraldtest"
	"github.com/herald-bot/herald/internal/interaction"
)

const postRoute = "/channels/{channel_id}/messages"

// A menu's message create carries a nonce naming the menu and its
// placement (rm<id>.<placement>), not its revision. Discord may hold a
// message an earlier attempt of the same placement created, showing an
// older revision, whose answer was lost: herald's create gets that
// message back (Discord deduplicates the nonce), so herald edits it to
// the newest revision instead of posting a second menu. A first publish
// with nothing to reconcile is one create and no edit.
func TestRoleMenuCreateReconciledByNonce(t *testing.T) {
	t.Parallel()
	h := heraldtest.New(t, heraldtest.WithFixture(fixture()))
	admin := h.As("admin")

	setup(t, h, "pings", heraldtest.Opts{}, "News")
	if posts, edits := h.Requests(http.MethodPost, postRoute), h.Requests(http.MethodPatch, postRoute+"/{message_id}"); posts != 1 || edits != 0 {
		t.Errorf("a first publish made %d creates and %d edits, want 1 and 0", posts, edits)
	}

	admin.Command("general", "/rolemenu/create", heraldtest.Opts{"name": "colours"}).Reply()
	admin.Command("general", "/rolemenu/option/add", heraldtest.Opts{"menu": "colours", "role": h.Role("Red")}).Reply()
	var id, placement int64
	if err := h.DB.QueryRow(t.Context(), `SELECT id, placement FROM rolemenus WHERE name = 'colours'`).Scan(&id, &placement); err != nil {
		t.Fatal(err)
	}
	var earlier discordgo.Message
	h.Sim.Do(http.MethodPost, "/channels/"+h.Channel("roles")+"/messages", map[string]any{
		"content": "**colours**\nan earlier revision", "nonce": fmt.Sprintf("rm%d.%d", id, placement+1), "enforce_nonce": true,
	}).JSON(t, &earlier)

	admin.Command("general", "/rolemenu/publish", heraldtest.Opts{"menu": "colours", "channel": h.Channel("roles")}).Reply()
	msg := menuMessage(t, h, "roles", "colours", func(m *discordgo.Message) bool { return m.Content == "**colours**" && len(interaction.Buttons(m)) == 1 })
	if msg.ID != earlier.ID {
		t.Errorf("herald posted message %s beside the one its nonce names (%s)", msg.ID, earlier.ID)
	}
	if n := len(h.Messages(h.Channel("roles"))); n != 2 {
		t.Errorf("%d messages in #roles, want the two menus", n)
	}
	h.Eventually("status to show both menus published", func() bool { return strings.Count(status(h), ": published") == 2 })
}

// The menu moves while its first message is being posted: the message
// posted for the old placement is deleted instead of recorded, and the
// menu is published where it now belongs.
func TestRoleMenuMovedWhilePosting(t *testing.T) {
	t.Parallel()
	h := heraldtest.New(t, heraldtest.WithFixture(fixture()))
	admin := h.As("admin")
	admin.Command("general", "/rolemenu/create", heraldtest.Opts{"name": "pings"}).Reply()
	admin.Command("general", "/rolemenu/option/add", heraldtest.Opts{"menu": "pings", "role": h.Role("News")}).Reply()

	// Discord takes two seconds to answer a message create.
	h.Sim.SetFault(sim.Fault{Route: http.MethodPost + " " + postRoute, LatencyMS: 2000})
	admin.Command("general", "/rolemenu/publish", heraldtest.Opts{"menu": "pings", "channel": h.Channel("roles")}).Reply()
	// The move comes while the create is on its way: herald's REST
	// engine shows it in flight (/debug/transport), not merely the job
	// running, which a loaded machine may not yet have got to the call.
	h.Eventually("the message create in flight", func() bool { return createInFlight(t, h) })
	admin.Command("general", "/rolemenu/move", heraldtest.Opts{"menu": "pings", "channel": h.Channel("general")}).Reply()
	h.Sim.SetFault(sim.Fault{Route: http.MethodPost + " " + postRoute, Clear: true})

	menuMessage(t, h, "general", "pings", nil)
	h.Eventually("no menu left in #roles", func() bool { return len(h.Messages(h.Channel("roles"))) == 0 })
	h.Eventually("status to show the menu published", func() bool { return strings.Contains(status(h), ": published") })
	if n := h.Requests(http.MethodPost, postRoute); n != 2 {
		t.Errorf("%d message creates, want 2 (one per placement)", n)
	}
}

// createInFlight reports whether herald's REST engine has a message
// create sent and not yet answered.
func createInFlight(t *testing.T, h *heraldtest.Herald) bool {
	t.Helper()
	res, err := http.Get("http://" + h.App.AdminAddr() + "/debug/transport")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var snap struct {
		Buckets []struct {
			Route    string `json:"route"`
			InFlight bool   `json:"in_flight"`
		} `json:"buckets"`
	}
	if err := json.NewDecoder(res.Body).Decode(&snap); err != nil {
		t.Fatal(err)
	}
	for _, b := range snap.Buckets {
		if b.Route == http.MethodPost+" "+postRoute && b.InFlight {
			return true
		}
	}
	return false
}
