package status

import (
	"fmt"
	"strings"
	"testing"

	"github.com/herald-bot/herald/internal/i18n"
)

// A report longer than a Discord message cuts its longest lists first
// and says how many lines it left out.
func TestRenderFitsOneMessage(t *testing.T) {
	c, err := i18n.Shipped()
	if err != nil {
		t.Fatal(err)
	}
	loc := c.For("en-US", "")
	var many, few []string
	for i := range 300 {
		many = append(many, fmt.Sprintf("menu %03d is waiting for Discord", i))
	}
	few = []string{"one transport line"}
	text := render(loc, "head", []section{{"**Many**", many}, {"**Empty**", nil}, {"**Few**", few}}, maxContent)
	if n := len([]rune(text)); n > maxContent {
		t.Fatalf("%d characters, want at most %d", n, maxContent)
	}
	if !strings.Contains(text, "one transport line") || strings.Contains(text, "**Empty**") {
		t.Errorf("the short section must stay whole and the empty one go:\n%s", text)
	}
	shown := strings.Count(text, "is waiting for Discord")
	if want := fmt.Sprintf("… and %d more.", 300-shown); !strings.Contains(text, want) {
		t.Errorf("showing %d of 300 lines, want %q in:\n%s", shown, want, text)
	}
}
