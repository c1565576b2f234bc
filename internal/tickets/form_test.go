package tickets_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/heraldtest"
)

// A panel's intake form: /tickets form sets its questions (a question
// longer than a modal's 45-character label is refused). A click on the
// panel is answered with the form itself and writes nothing; a submit
// whose answer is longer than allowed, or that answers other questions,
// opens nothing; a good submit opens the ticket with the answers in its
// welcome.
func TestIntakeForm(t *testing.T) {
	t.Parallel()
	h := heraldtest.New(t, heraldtest.WithFixture(fixture()))
	panel := setup(t, h, heraldtest.Opts{})
	var id string
	h.DB.QueryRow(t.Context(), `SELECT id::text FROM ticket_panels`).Scan(&id)
	admin := h.As("admin")
	if r := admin.Command("general", "/tickets/form", heraldtest.Opts{"panel": id,
		"question-1": strings.Repeat("x", 46)}).Reply(); !strings.Contains(r.Content, "question-1") {
		t.Errorf("a 46-character question: %q", r.Content)
	}
	if r := admin.Command("general", "/tickets/form", heraldtest.Opts{"panel": id, "question-1": "What happened?",
		"question-3": "Order number"}).Reply(); !strings.Contains(r.Content, "now asks 2 question(s)") {
		t.Fatalf("form: %q", r.Content)
	}

	click := h.As("bob").Click(panel, heraldtest.Button(t, panel, "Open ticket"))
	st := click.Ack()
	if st.AckType != int(discordgo.InteractionResponseModal) {
		t.Fatalf("the click was answered with type %d, want the modal", st.AckType)
	}
	var modal struct {
		CustomID   string `json:"custom_id"`
		Components []struct {
			Components []struct {
				CustomID  string `json:"custom_id"`
				Label     string `json:"label"`
				MaxLength int    `json:"max_length"`
			} `json:"components"`
		} `json:"components"`
	}
	if err := json.Unmarshal(st.Modal, &modal); err != nil {
		t.Fatal(err)
	}
	if len(modal.Components) != 2 || modal.Components[1].Components[0].Label != "Order number" ||
		modal.Components[0].Components[0].MaxLength != 1024 {
		t.Fatalf("modal = %s", st.Modal)
	}
	var rows int
	h.DB.QueryRow(t.Context(), `SELECT count(*) FROM tickets`).Scan(&rows)
	if rows != 0 {
		t.Fatalf("showing the form recorded %d tickets", rows)
	}

	bob := h.As("bob")
	if r := bob.Submit("help", modal.CustomID, map[string]string{"q1": strings.Repeat("a", 1025), "q2": "42"}).Reply(); !strings.Contains(r.Content, "needs 1 to 1024 characters") {
		t.Errorf("an answer too long: %q", r.Content)
	}
	if r := bob.Submit("help", modal.CustomID, map[string]string{"q1": "it broke"}).Reply(); !strings.Contains(r.Content, "form changed") {
		t.Errorf("a question missing: %q", r.Content)
	}
	h.DB.QueryRow(t.Context(), `SELECT count(*) FROM tickets`).Scan(&rows)
	if rows != 0 {
		t.Fatalf("refused submits recorded %d tickets", rows)
	}
	ch := ticketChannel(t, bob.Submit("help", modal.CustomID, map[string]string{"q1": "It <b>broke</b>", "q2": "A-42"}).Reply())
	welcome := message(t, h, ch, "opened ticket #1")
	if len(welcome.Embeds) != 1 || len(welcome.Embeds[0].Fields) != 2 {
		t.Fatalf("welcome embeds = %+v", welcome.Embeds)
	}
	f := welcome.Embeds[0].Fields
	if f[0].Name != "What happened?" || f[0].Value != "It <b>broke</b>" || f[1].Name != "Order number" || f[1].Value != "A-42" {
		t.Errorf("answers = %+v %+v", *f[0], *f[1])
	}
	if r := admin.Command("general", "/tickets/form", heraldtest.Opts{"panel": id}).Reply(); !strings.Contains(r.Content, "without questions") {
		t.Errorf("clearing the form: %q", r.Content)
	}
}
