package sim_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"
	"github.com/gorilla/websocket"

	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/discord/sim/wsgateway"
	"github.com/herald-bot/herald/internal/discord/simtest"
)

// TestPrivilegedIntentsFollowApplicationFlags checks Discord's rule for
// privileged intents ("Gateway Intents" › "Privileged Intents"): an
// application's owner switches Server Members, Presence and Message
// Content on in the Developer Portal, which sets its GATEWAY_* (or, under
// 100 servers, GATEWAY_*_LIMITED) application flags; IDENTIFY with one
// that is off closes with 4014 "Disallowed intent(s)". A new application
// has none, and GET /applications/@me reports the flags.
func TestPrivilegedIntentsFollowApplicationFlags(t *testing.T) {
	t.Parallel()
	s := simtest.New(t, simtest.WithFakeClock())
	s.CreateGuild(sim.DefaultFixture())
	var app struct {
		ID    string
		Flags int64
		Bot   struct{ ID string }
	}
	s.Do("GET", "/applications/@me", nil).JSON(t, &app)
	if app.Flags != 0 || app.ID == "" || app.Bot.ID != s.BotUserID() || app.ID != s.ApplicationID() {
		t.Fatalf("a new application: %+v", app)
	}

	open := func(intents discordgo.Intent) error {
		s.Clock.Advance(wsgateway.DefaultIdentifyWindow) // a session start is due
		dg := s.Session()
		dg.ShouldReconnectOnError = false
		dg.Identify.Intents = intents
		err := dg.Open()
		if err == nil {
			dg.Close()
		}
		return err
	}
	disallowed := func(err error) bool {
		var ce *websocket.CloseError
		return errors.As(err, &ce) && ce.Code == 4014
	}
	for _, intent := range []discordgo.Intent{discordgo.IntentsGuildMembers, discordgo.IntentsGuildPresences, discordgo.IntentMessageContent} {
		if err := open(discordgo.IntentsGuilds | intent); !disallowed(err) {
			t.Fatalf("intent %d on a new application: %v, want close 4014", intent, err)
		}
	}
	if err := open(discordgo.IntentsGuilds | discordgo.IntentsGuildMessages); err != nil {
		t.Fatalf("unprivileged intents: %v", err)
	}

	s.SetApplicationFlags(sim.AppFlagGatewayGuildMembersLimited | sim.AppFlagGatewayMessageContent)
	s.Do("GET", "/oauth2/applications/@me", nil).JSON(t, &app)
	if app.Flags != sim.AppFlagGatewayGuildMembersLimited|sim.AppFlagGatewayMessageContent {
		t.Fatalf("flags after the portal: %d", app.Flags)
	}
	if err := open(discordgo.IntentsGuilds | discordgo.IntentsGuildMembers | discordgo.IntentMessageContent); err != nil {
		t.Fatalf("enabled intents: %v", err)
	}
	if err := open(discordgo.IntentsGuilds | discordgo.IntentsGuildPresences); !disallowed(err) {
		t.Fatalf("presence still off: %v, want close 4014", err)
	}
}

// TestApplicationControlRefusesUnknownFlags checks that POST
// /_sim/application takes only Discord's application flag bits.
func TestApplicationControlRefusesUnknownFlags(t *testing.T) {
	t.Parallel()
	s := simtest.New(t)
	body := rawControl(t, "POST", s.URL+"/_sim/application", `{"flags": 2}`, 400)
	if !strings.Contains(string(body), "does not define") {
		t.Fatalf("body %s", body)
	}
	rawControl(t, "POST", s.URL+"/_sim/application", `{}`, 400)
	if err := s.Server.SetApplicationFlags(-1); err == nil {
		t.Fatal("negative flags accepted")
	}
}
