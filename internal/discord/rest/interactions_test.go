package rest_test

import (
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/discord/rest"
	"github.com/herald-bot/herald/internal/discord/sim"
)

func (w *world) interact(t *testing.T, req sim.InteractionRequest) sim.InteractionCreated {
	t.Helper()
	req.GuildID, req.UserID = w.g.ID, w.g.Member("bob")
	if req.ChannelID == "" {
		req.ChannelID = w.g.Channel("general")
	}
	return w.s.Interact(req)
}

// Every kind of initial response is sent with only the fields Discord
// accepts for its type (the conformance checks see each).
func TestRespondShapes(t *testing.T) {
	t.Parallel()
	w := newWorld(t, sim.DefaultFixture())
	ctx := t.Context()
	menu, err := w.c.CreateMessage(ctx, w.g.Channel("general"), rest.NewMessage{Content: "menu"})
	if err != nil {
		t.Fatal(err)
	}
	cmd := sim.InteractionRequest{Kind: "command", Name: "herald"}
	click := sim.InteractionRequest{Kind: "component", CustomID: "a:1:b", MessageID: menu.ID}
	auto := sim.InteractionRequest{Kind: "autocomplete", Name: "rolemenu", Focused: "menu",
		Options: []any{map[string]any{"type": 3, "name": "menu", "value": "co"}}}
	for _, tc := range []struct {
		name string
		req  sim.InteractionRequest
		resp *discordgo.InteractionResponse
	}{
		{"message", cmd, &discordgo.InteractionResponse{Type: discordgo.InteractionResponseChannelMessageWithSource,
			Data: &discordgo.InteractionResponseData{Content: "hi", Flags: discordgo.MessageFlagsEphemeral}}},
		{"deferred", cmd, &discordgo.InteractionResponse{Type: discordgo.InteractionResponseDeferredChannelMessageWithSource,
			Data: &discordgo.InteractionResponseData{Flags: discordgo.MessageFlagsEphemeral}}},
		{"deferred update", click, &discordgo.InteractionResponse{Type: discordgo.InteractionResponseDeferredMessageUpdate}},
		{"update", click, &discordgo.InteractionResponse{Type: discordgo.InteractionResponseUpdateMessage,
			Data: &discordgo.InteractionResponseData{Content: "updated"}}},
		{"modal", cmd, &discordgo.InteractionResponse{Type: discordgo.InteractionResponseModal, Data: &discordgo.InteractionResponseData{
			CustomID: "tickets:1:form", Title: "Open a ticket", Components: []discordgo.MessageComponent{discordgo.ActionsRow{
				Components: []discordgo.MessageComponent{discordgo.TextInput{CustomID: "why", Label: "Why?", Style: discordgo.TextInputShort}}}}}}},
		{"autocomplete", auto, &discordgo.InteractionResponse{Type: discordgo.InteractionApplicationCommandAutocompleteResult,
			Data: &discordgo.InteractionResponseData{Choices: []*discordgo.ApplicationCommandOptionChoice{{Name: "colours", Value: "colours"}}}}},
	} {
		in := w.interact(t, tc.req)
		if err := w.c.Respond(ctx, in.ID, in.Token, tc.resp); err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if st := w.s.Interaction(in.ID); !st.Acked || st.AckType != int(tc.resp.Type) {
			t.Errorf("%s: the simulator saw %+v", tc.name, st)
		}
	}
}

// A deferred answer filled by editing @original, follow-ups created,
// edited and deleted, and the original deleted.
func TestOriginalAndFollowups(t *testing.T) {
	t.Parallel()
	w := newWorld(t, sim.DefaultFixture())
	ctx := t.Context()
	in := w.interact(t, sim.InteractionRequest{Kind: "command", Name: "herald"})
	if err := w.c.Respond(ctx, in.ID, in.Token, &discordgo.InteractionResponse{Type: discordgo.InteractionResponseDeferredChannelMessageWithSource}); err != nil {
		t.Fatal(err)
	}
	done := "done: 3 roles"
	if _, err := w.c.EditOriginal(ctx, in.Token, rest.MessageEdit{Content: &done}); err != nil {
		t.Fatal(err)
	}
	if o, err := w.c.Original(ctx, in.Token); err != nil || o.Content != done {
		t.Fatalf("original = %+v, %v", o, err)
	}
	f, err := w.c.CreateFollowup(ctx, in.Token, rest.WebhookMessage{Content: "one more thing", Flags: discordgo.MessageFlagsEphemeral})
	if err != nil || f.ID == "" {
		t.Fatalf("follow-up = %+v, %v", f, err)
	}
	more := "one more thing, edited"
	if m, err := w.c.EditFollowup(ctx, in.Token, f.ID, rest.MessageEdit{Content: &more}); err != nil || m.Content != more {
		t.Errorf("edited follow-up = %+v, %v", m, err)
	}
	if err := w.c.DeleteFollowup(ctx, in.Token, f.ID); err != nil {
		t.Fatal(err)
	}
	if err := w.c.DeleteOriginal(ctx, in.Token); err != nil {
		t.Fatal(err)
	}
	if st := w.s.Interaction(in.ID); st.Followups != 1 {
		t.Errorf("follow-ups = %d, want the one created", st.Followups)
	}
}
