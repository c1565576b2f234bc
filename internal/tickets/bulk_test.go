package tickets_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/heraldtest"
)

// TestPanelsRepublish posts a deleted panel anew and leaves one shown as
// saved alone, as one bulk action whose progress message names both.
func TestPanelsRepublish(t *testing.T) {
	h := heraldtest.New(t, heraldtest.WithFixture(fixture()))
	desk := setup(t, h, heraldtest.Opts{})
	admin := h.As("admin")
	if r := admin.Command("general", "/tickets/panel", heraldtest.Opts{"channel": h.Channel("general"), "title": "Billing"}).Reply(); !strings.Contains(r.Content, "Publishing panel") {
		t.Fatalf("panel: %q", r.Content)
	}
	billing := message(t, h, h.Channel("general"), "**Billing**")
	h.Eventually("herald to record the panel's message", func() bool {
		var id *string
		err := h.DB.QueryRow(t.Context(), `SELECT message_id FROM ticket_panels WHERE title = 'Help desk'`).Scan(&id)
		return err == nil && id != nil && *id == desk.ID
	})
	if res := h.Sim.Do(http.MethodDelete, "/channels/"+desk.ChannelID+"/messages/"+desk.ID, nil); res.Status != http.StatusNoContent {
		t.Fatalf("delete the panel: %d %s", res.Status, res.Body)
	}
	h.Eventually("the help desk panel to be marked gone", func() bool {
		var state string
		err := h.DB.QueryRow(t.Context(), `SELECT state FROM ticket_panels WHERE title = 'Help desk'`).Scan(&state)
		return err == nil && state == "target_missing"
	})
	edits := h.Succeeded(http.MethodPatch, "/channels/{channel_id}/messages/{message_id}")
	gone := "Ticket panel **Help desk** in <#" + h.Channel("help") + "> — saved revision 1, visible revision 1: failed: its message or channel was deleted. Fix: `/tickets panels republish`"
	if s := admin.Command("general", "/herald/status", nil).Reply().Content; !strings.Contains(s, gone) || strings.Contains(s, "**Billing**") {
		t.Errorf("/herald status before the republish:\n%s\nwant %q and nothing on Billing", s, gone)
	}

	admin.Command("general", "/tickets/panels/republish", nil).Ack()
	var progress *discordgo.Message
	h.Eventually("the republish to finish", func() bool {
		for _, m := range h.Messages(h.Channel("general")) {
			if strings.HasPrefix(m.Content, "**Republish every ticket panel**") && strings.Contains(m.Content, "**Finished:") {
				progress = m
				return true
			}
		}
		return false
	})
	want := "✅ Done (2): Help desk (<#" + h.Channel("help") + ">), Billing (<#" + h.Channel("general") + ">)"
	if !strings.Contains(progress.Content, want) || !strings.Contains(progress.Content, "**Finished: 2 of 2 done.**") {
		t.Errorf("progress:\n%s\nwant %q", progress.Content, want)
	}
	if again := message(t, h, h.Channel("help"), "**Help desk**"); again.ID == desk.ID {
		t.Error("the deleted panel was not posted anew")
	}
	// The progress message is edited; the Billing panel is not.
	for _, r := range h.Sim.Server.Requests() {
		if r.Method == http.MethodPatch && strings.HasSuffix(r.Path, "/messages/"+billing.ID) {
			t.Errorf("Billing was edited though it showed its saved revision")
		}
	}
	// The owner asks: the admin's status cooldown is still running.
	if s := h.As("owner").Command("general", "/herald/status", nil).Reply().Content; strings.Contains(s, "Ticket panel") {
		t.Errorf("/herald status after the republish still names a panel:\n%s", s)
	}
	if h.Succeeded(http.MethodPatch, "/channels/{channel_id}/messages/{message_id}") == edits {
		t.Error("the progress message was never edited")
	}
}
