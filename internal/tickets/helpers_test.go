package tickets_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/heraldtest"
	"github.com/herald-bot/herald/internal/testsupport/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// fixture: an admin who may manage the server, a Helpers support role
// with sam and tess in it, a #help channel for panels and a #ticket-log.
func fixture() sim.Fixture {
	f := sim.DefaultFixture()
	f.Roles = append(f.Roles,
		sim.FixtureRole{Name: "Admins", Permissions: strconv.FormatInt(discordgo.PermissionManageGuild, 10), Position: 9},
		sim.FixtureRole{Name: "Helpers", Permissions: "0", Position: 6})
	f.Channels = append(f.Channels, sim.FixtureChannel{Name: "help", Type: 0}, sim.FixtureChannel{Name: "ticket-log", Type: 0})
	f.Members = append(f.Members, sim.FixtureMember{Username: "admin", Roles: []string{"Admins"}},
		sim.FixtureMember{Username: "sam", Roles: []string{"Helpers"}}, sim.FixtureMember{Username: "tess", Roles: []string{"Helpers"}},
		sim.FixtureMember{Username: "erin"})
	return f
}

// message waits for a message in channelID whose content contains text.
func message(t *testing.T, h *heraldtest.Herald, channelID, text string) *discordgo.Message {
	t.Helper()
	var found *discordgo.Message
	h.Eventually("a message with "+text, func() bool {
		for _, m := range h.Messages(channelID) {
			if strings.Contains(m.Content, text) {
				found = m
				return true
			}
		}
		return false
	})
	return found
}

func count(h *heraldtest.Herald, channelID, text string) int {
	n := 0
	for _, m := range h.Messages(channelID) {
		if strings.Contains(m.Content, text) {
			n++
		}
	}
	return n
}

// setup configures tickets as admin and publishes a panel in #help.
func setup(t *testing.T, h *heraldtest.Herald, opts heraldtest.Opts) *discordgo.Message {
	t.Helper()
	admin := h.As("admin")
	opts["support-role"] = h.Role("Helpers")
	if r := admin.Command("general", "/tickets/setup", opts).Reply(); !strings.Contains(r.Content, "Tickets are set up") {
		t.Fatalf("setup: %q", r.Content)
	}
	if r := admin.Command("general", "/tickets/panel", heraldtest.Opts{"channel": h.Channel("help"), "title": "Help desk"}).Reply(); !strings.Contains(r.Content, "Publishing panel") {
		t.Fatalf("panel: %q", r.Content)
	}
	return message(t, h, h.Channel("help"), "**Help desk**")
}

// ticketChannel reads the ticket channel's id from the member's reply.
func ticketChannel(t *testing.T, reply *discordgo.Message) string {
	t.Helper()
	_, rest, ok := strings.Cut(reply.Content, "<#")
	id, _, ok2 := strings.Cut(rest, ">")
	if !ok || !ok2 {
		t.Fatalf("no channel link in %q", reply.Content)
	}
	return id
}

// reply is a member's interaction in a ticket's thread or channel, which
// the fixture does not name: Discord sends slash commands from there.
type reply struct {
	h  *heraldtest.Herald
	id string
}

// command runs /ticket <sub> as username in channelID with options of
// their type (strings, user ids as type 6, integers as type 4).
func command(h *heraldtest.Herald, username, channelID, sub string, opts map[string]any) reply {
	var leaf []any
	for name, v := range opts {
		typ := 3
		switch x := v.(type) {
		case int:
			typ = 4
		case userID:
			typ, v = 6, string(x)
		}
		leaf = append(leaf, map[string]any{"type": typ, "name": name, "value": v})
	}
	created := h.Sim.Interact(sim.InteractionRequest{Kind: "command", GuildID: h.Guild.ID, ChannelID: channelID,
		UserID: h.Member(username), Name: "ticket", Options: []any{map[string]any{"type": 1, "name": sub, "options": leaf}}})
	return reply{h: h, id: created.ID}
}

type userID string

// text waits for the reply's content.
func (r reply) text(t *testing.T) string {
	t.Helper()
	var content string
	r.h.Eventually("the reply to "+r.id, func() bool {
		st, _ := r.h.Sim.Server.Interaction(r.id)
		if st.Original == nil {
			return false
		}
		content, _ = st.Original["content"].(string)
		return content != ""
	})
	return content
}

// post sends a message as a member through the simulator's control API.
func post(t *testing.T, h *heraldtest.Herald, username, channelID, content string) {
	t.Helper()
	body, _ := json.Marshal(sim.MemberMessage{UserID: h.Member(username), Content: content})
	res, err := h.Sim.Client.Post(h.Sim.URL+"/_sim/channels/"+channelID+"/messages", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("post as %s: %d", username, res.StatusCode)
	}
}
