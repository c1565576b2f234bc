package rest_test

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/discord/rest"
	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/discord/transport"
)

// A message create carries a nonce with enforce_nonce: the same nonce
// sent twice is one message.
func TestCreateMessageOncePerNonce(t *testing.T) {
	t.Parallel()
	w := newWorld(t, sim.DefaultFixture())
	ch := w.g.Channel("general")
	a, err := w.c.CreateMessage(t.Context(), ch, rest.NewMessage{Content: "ticket opened", Nonce: "ticket-7"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := w.c.CreateMessage(t.Context(), ch, rest.NewMessage{Content: "ticket opened", Nonce: "ticket-7"})
	if err != nil || b.ID != a.ID {
		t.Fatalf("second create = %v, %v; want the first message %s", b, err, a.ID)
	}
	if _, err := w.c.CreateMessage(t.Context(), ch, rest.NewMessage{Content: "another"}); err != nil {
		t.Fatal(err)
	}
	if n := len(w.s.Messages(ch)); n != 2 {
		t.Errorf("%d messages, want 2", n)
	}
}

func TestEditGetDelete(t *testing.T) {
	t.Parallel()
	w := newWorld(t, sim.DefaultFixture())
	ch := w.g.Channel("roles")
	m, err := w.c.CreateMessage(t.Context(), ch, rest.NewMessage{Content: "rev 1",
		Files: []*discordgo.File{{Name: "menu.txt", ContentType: "text/plain", Reader: strings.NewReader("menu")}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Attachments) != 1 || m.Attachments[0].Filename != "menu.txt" {
		t.Errorf("attachments = %+v", m.Attachments)
	}
	content := "rev 2"
	if _, err := w.c.EditMessage(t.Context(), ch, m.ID, rest.MessageEdit{Content: &content}); err != nil {
		t.Fatal(err)
	}
	got, err := w.c.Message(t.Context(), ch, m.ID)
	if err != nil || got.Content != "rev 2" {
		t.Fatalf("after the edit: %+v, %v", got, err)
	}
	if err := w.c.DeleteMessage(t.Context(), ch, m.ID, "menu deleted"); err != nil {
		t.Fatal(err)
	}
	if _, err := w.c.Message(t.Context(), ch, m.ID); !errors.As(err, new(*transport.APIError)) {
		t.Errorf("deleted message: %v", err)
	}
}

// MessagesAfter walks a whole channel oldest first, a page of 100 per
// request, and stops when the caller does.
func TestMessagesAfterWalksOldestFirst(t *testing.T) {
	t.Parallel()
	w := newWorld(t, sim.DefaultFixture())
	w.s.SetLimits(sim.LimitChange{Route: "POST /channels/{channel_id}/messages", Limit: 1000, WindowMS: 1000})
	ch := w.g.Channel("general")
	const n = 205
	var want []string
	for i := range n {
		m, err := w.c.CreateMessage(t.Context(), ch, rest.NewMessage{Content: strconv.Itoa(i)})
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, m.ID)
	}
	var got []string
	for m, err := range w.c.MessagesAfter(t.Context(), ch, "0") {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, m.ID)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("walked %d messages, want the %d in order", len(got), n)
	}
	seen := 0
	for range w.c.MessagesAfter(t.Context(), ch, want[99]) {
		if seen++; seen == 3 {
			break
		}
	}
	page, err := w.c.Messages(t.Context(), ch, rest.MessageQuery{Before: want[10], Limit: 5})
	if err != nil || len(page) != 5 || page[0].ID != want[9] {
		t.Errorf("page before the 11th: %d messages, first %v, %v", len(page), page, err)
	}
}

func TestBulkDelete(t *testing.T) {
	t.Parallel()
	w := newWorld(t, sim.DefaultFixture())
	ch := w.g.Channel("general")
	var ids []string
	for i := range 3 {
		m, err := w.c.CreateMessage(t.Context(), ch, rest.NewMessage{Content: fmt.Sprint(i)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, m.ID)
	}
	if err := w.c.BulkDeleteMessages(t.Context(), ch, ids[:2], "cleanup"); err != nil {
		t.Fatal(err)
	}
	if left := w.s.Messages(ch); len(left) != 1 || left[0].ID != ids[2] {
		t.Errorf("left %d messages", len(left))
	}
	before := len(w.s.Requests())
	if err := w.c.BulkDeleteMessages(t.Context(), ch, ids[2:], ""); err == nil || !strings.Contains(err.Error(), "2 to 100") {
		t.Errorf("one message: %v, want a refusal", err)
	}
	if len(w.s.Requests()) != before {
		t.Error("a refused bulk delete reached Discord")
	}
}

func TestPins(t *testing.T) {
	t.Parallel()
	w := newWorld(t, sim.DefaultFixture())
	ch := w.g.Channel("general")
	m, err := w.c.CreateMessage(t.Context(), ch, rest.NewMessage{Content: "rules"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.c.PinMessage(t.Context(), ch, m.ID, "the rules"); err != nil {
		t.Fatal(err)
	}
	pins, err := w.c.Pins(t.Context(), ch)
	if err != nil || len(pins) != 1 || pins[0].Message.ID != m.ID || pins[0].PinnedAt == "" {
		t.Fatalf("pins = %+v, %v", pins, err)
	}
	if err := w.c.UnpinMessage(t.Context(), ch, m.ID, ""); err != nil {
		t.Fatal(err)
	}
	if pins, _ := w.c.Pins(t.Context(), ch); len(pins) != 0 {
		t.Errorf("%d pins after unpinning", len(pins))
	}
}

// Reactions with a unicode emoji (escaped in the path) and a custom one
// (name:id), listed, removed one by one and all at once.
func TestReactions(t *testing.T) {
	t.Parallel()
	f := sim.DefaultFixture()
	f.Emojis = []string{"herald"}
	w := newWorld(t, f)
	ch := w.g.Channel("roles")
	m, err := w.c.CreateMessage(t.Context(), ch, rest.NewMessage{Content: "react"})
	if err != nil {
		t.Fatal(err)
	}
	custom := "herald:" + w.g.Emoji("herald")
	for _, e := range []string{"👍", custom} {
		if err := w.c.AddReaction(t.Context(), ch, m.ID, e); err != nil {
			t.Fatalf("react %s: %v", e, err)
		}
	}
	users, err := w.c.Reactions(t.Context(), ch, m.ID, "👍", "", 10)
	if err != nil || len(users) != 1 || users[0].ID != w.s.BotUserID() {
		t.Fatalf("👍 users = %+v, %v", users, err)
	}
	if err := w.c.RemoveOwnReaction(t.Context(), ch, m.ID, "👍"); err != nil {
		t.Fatal(err)
	}
	if err := w.c.RemoveUserReaction(t.Context(), ch, m.ID, custom, w.s.BotUserID()); err != nil {
		t.Fatal(err)
	}
	if err := w.c.AddReaction(t.Context(), ch, m.ID, "🎉"); err != nil {
		t.Fatal(err)
	}
	if err := w.c.RemoveAllReactions(t.Context(), ch, m.ID); err != nil {
		t.Fatal(err)
	}
	got, _ := w.c.Message(t.Context(), ch, m.ID)
	if len(got.Reactions) != 0 {
		t.Errorf("reactions left: %+v", got.Reactions)
	}
	var api *transport.APIError
	if err := w.c.AddReaction(t.Context(), ch, m.ID, "nope:1"); !errors.As(err, &api) || api.Code != 10014 {
		t.Errorf("unknown emoji: %v, want 10014", err)
	}
}
