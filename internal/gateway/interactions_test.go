package gateway

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/discord/simtest"
)

// world is a simulator with the default guild, a message carrying
// controls, and herald's session connected with router.
type world struct {
	s       *simtest.Sim
	g       sim.FixtureResult
	message string
	logs    *syncBuffer
}

func newWorld(t *testing.T, router *Router) *world {
	t.Helper()
	s := simtest.New(t)
	g := s.CreateGuild(sim.DefaultFixture())
	var msg struct{ ID string }
	s.Do("POST", "/channels/"+g.Channel("roles")+"/messages", map[string]any{"content": "Pick your roles"}).JSON(t, &msg)
	w := &world{s: s, g: g, message: msg.ID, logs: &syncBuffer{}}
	gw, _ := open(t, s, router, w.logs)
	eventually(t, "ready", func() bool { return gw.Ready() == nil && gw.Guilds() == 1 })
	return w
}

func (w *world) click(t *testing.T, customID, locale string) sim.InteractionCreated {
	t.Helper()
	return w.s.Interact(sim.InteractionRequest{GuildID: w.g.ID, ChannelID: w.g.Channel("roles"), UserID: w.g.Member("bob"),
		Kind: "component", CustomID: customID, MessageID: w.message, Locale: locale})
}

// answer waits for the initial response and returns its type and, for a
// message response, its content.
func (w *world) answer(t *testing.T, in sim.InteractionCreated) (int, string) {
	t.Helper()
	eventually(t, "ack", func() bool { return w.s.Interaction(in.ID).Acked })
	typ := w.s.Interaction(in.ID).AckType
	if typ != int(discordgo.InteractionResponseChannelMessageWithSource) {
		return typ, ""
	}
	var m discordgo.Message
	w.s.Do("GET", "/webhooks/"+w.s.BotUserID()+"/"+in.Token+"/messages/@original", nil).JSON(t, &m)
	if m.Flags&discordgo.MessageFlagsEphemeral == 0 {
		t.Errorf("answer %q is not ephemeral", m.Content)
	}
	return typ, m.Content
}

// A control herald does not know — forged, foreign, retired — gets an
// ephemeral answer in the member's language, and nothing else happens.
func TestUnknownControlsAreAnsweredAsOutdated(t *testing.T) {
	t.Parallel()
	router := NewRouter()
	called := false
	router.Control("rolemenu", 2, func(context.Context, *Interaction) (*discordgo.InteractionResponse, error) {
		called = true
		return nil, errors.New("must not be called")
	})
	w := newWorld(t, router)
	before := len(w.s.Server.Requests())
	tests := []struct{ customID, locale, want string }{
		{"not a herald id", "de", "nicht mehr aktuell"},
		{"rolemenu:1:pick/1/2", "fr", "plus à jour"}, // a retired version
		{"tickets:1:open", "ko", "더 이상"},             // a feature that is not there
		{"rolemenu:01:pick", "en-US", "out of date"},
	}
	for _, tc := range tests {
		typ, content := w.answer(t, w.click(t, tc.customID, tc.locale))
		if typ != int(discordgo.InteractionResponseChannelMessageWithSource) || !strings.Contains(content, tc.want) {
			t.Errorf("%q (%s): answer type %d %q, want an ephemeral message containing %q", tc.customID, tc.locale, typ, content, tc.want)
		}
	}
	if called {
		t.Error("a retired version reached the current handler")
	}
	for _, r := range w.s.Server.Requests()[before:] {
		if r.Route != "/interactions/{interaction_id}/{interaction_token}/callback" && r.Method != "GET" {
			t.Errorf("unexpected call %s %s: an outdated control must change nothing", r.Method, r.Route)
		}
	}
}

// A registered control reaches its handler with the parsed custom_id and
// the member's language, and its response is sent.
func TestControlsReachTheirHandler(t *testing.T) {
	t.Parallel()
	router := NewRouter()
	var mu sync.Mutex
	var got *Interaction
	router.Control("rolemenu", 1, func(_ context.Context, in *Interaction) (*discordgo.InteractionResponse, error) {
		mu.Lock()
		got = in
		mu.Unlock()
		return &discordgo.InteractionResponse{Type: discordgo.InteractionResponseDeferredMessageUpdate}, nil
	})
	router.Command("boom", func(context.Context, *Interaction) (*discordgo.InteractionResponse, error) {
		return nil, errors.New("database down")
	})
	w := newWorld(t, router)
	typ, _ := w.answer(t, w.click(t, "rolemenu:1:pick/12/3", "de"))
	if typ != int(discordgo.InteractionResponseDeferredMessageUpdate) {
		t.Errorf("answer type %d, want a deferred update", typ)
	}
	mu.Lock()
	if got == nil || got.CustomID != (CustomID{"rolemenu", 1, "pick/12/3"}) || got.Localizer.Lang() != "de" || got.Member.User.ID != w.g.Member("bob") {
		t.Errorf("handler got %+v", got)
	}
	mu.Unlock()

	failed := w.s.Interact(sim.InteractionRequest{GuildID: w.g.ID, ChannelID: w.g.Channel("general"), UserID: w.g.Member("alice"), Kind: "command", Name: "boom"})
	if _, content := w.answer(t, failed); !strings.Contains(content, "went wrong") {
		t.Errorf("a failing handler answered %q", content)
	}
	unknown := w.s.Interact(sim.InteractionRequest{GuildID: w.g.ID, ChannelID: w.g.Channel("general"), UserID: w.g.Member("alice"), Kind: "command", Name: "gone"})
	if _, content := w.answer(t, unknown); !strings.Contains(content, "out of date") {
		t.Errorf("an unknown command answered %q", content)
	}
}
