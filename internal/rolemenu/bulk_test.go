package rolemenu_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/heraldtest"
)

// TestPublishAll brings every published menu to its saved configuration
// as one bulk action: a menu whose message was deleted is posted anew,
// menus already shown as saved cost no call, and the progress message
// names each menu done.
func TestPublishAll(t *testing.T) {
	t.Parallel()
	h := heraldtest.New(t, heraldtest.WithFixture(fixture()))
	colours := setup(t, h, "colours", heraldtest.Opts{}, "Red", "Blue")
	games := setup(t, h, "games", heraldtest.Opts{}, "News")
	// Delete it only once herald has recorded it: a deletion it hears of
	// before that is not matched to the menu.
	h.Eventually("herald to record the games message", func() bool {
		var id *string
		err := h.DB.QueryRow(t.Context(), `SELECT message_id FROM rolemenus WHERE name = 'games'`).Scan(&id)
		return err == nil && id != nil && *id == games.ID
	})
	if res := h.Sim.Do(http.MethodDelete, "/channels/"+games.ChannelID+"/messages/"+games.ID, nil); res.Status != http.StatusNoContent {
		t.Fatalf("delete the games message: %d %s", res.Status, res.Body)
	}
	h.Eventually("the games menu to be marked gone", func() bool {
		var state string
		err := h.DB.QueryRow(t.Context(), `SELECT state FROM rolemenus WHERE name = 'games'`).Scan(&state)
		return err == nil && state == "target_missing"
	})
	posts := h.Requests(http.MethodPost, "/channels/{channel_id}/messages")

	r := h.As("admin").Command("general", "/rolemenu/publish-all", nil).Reply()
	if !strings.Contains(r.Content, "Publish every role menu as saved") {
		t.Fatalf("answer: %q", r.Content)
	}
	var progress *discordgo.Message
	h.Eventually("publish-all to finish", func() bool {
		for _, m := range h.Messages(h.Channel("general")) {
			if strings.HasPrefix(m.Content, "**Publish every role menu as saved**") && strings.Contains(m.Content, "**Finished:") {
				progress = m
				return true
			}
		}
		return false
	})
	for _, want := range []string{"✅ Done (2): colours, games", "**Finished: 2 of 2 done.**"} {
		if !strings.Contains(progress.Content, want) {
			t.Errorf("progress lacks %q:\n%s", want, progress.Content)
		}
	}
	reposted := menuMessage(t, h, "roles", "games", nil)
	if reposted.ID == games.ID {
		t.Error("the deleted games menu was not posted anew")
	}
	// One new menu message and the progress message; no edit of colours,
	// which already showed its saved revision.
	if n := h.Requests(http.MethodPost, "/channels/{channel_id}/messages") - posts; n != 2 {
		t.Errorf("%d messages posted, want 2 (games and the progress)", n)
	}
	for _, m := range h.Sim.Server.Requests() {
		if m.Method == http.MethodPatch && strings.HasSuffix(m.Path, "/messages/"+colours.ID) && m.Status < 300 {
			t.Errorf("colours was edited though it showed its saved revision: %s", m.Path)
		}
	}
}
