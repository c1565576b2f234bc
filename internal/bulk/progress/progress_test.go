package bulk

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/herald-bot/herald/internal/i18n"
)

func testAction(t *testing.T, locale string) *action {
	t.Helper()
	c, err := i18n.Shipped()
	if err != nil {
		t.Fatal(err)
	}
	return &action{Action: Action{ID: 7, StartedBy: "42", Localizer: c.For("", locale)}, title: "Add <@&1> to every member with <@&2>",
		planned: true, created: time.Unix(1_800_000_000, 0)}
}

func rows(n int, state string) []row {
	out := make([]row, n)
	for i := range out {
		out[i] = row{name: fmt.Sprintf("%s_%04d", state, i), state: state}
	}
	return out
}

func TestRenderStaysWithinDiscordsLimit(t *testing.T) {
	act := testAction(t, "en-US")
	now := time.Now()
	tasks := append(append(append(rows(2000, "done"), rows(1000, "failed")...), rows(1, "running")...), rows(2000, "pending")...)
	tasks[2000].reason = "target_missing" // the first failure, for a reason of its own
	until := now.Add(30 * time.Second)
	tasks = append(tasks, row{name: "waits*bold*", state: "pending", reason: "rate_limited", until: &until})
	content, components, err := render(act, tasks, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(content) > 2000 {
		t.Errorf("%d characters, over 2000:\n%s", len(content), content)
	}
	for _, want := range []string{
		"**2000 of 5002 done** · 1 in progress · 1 waiting · 1000 failed · 2000 to do",
		"✅ Done (2000): done\\_0000, done\\_0001",
		"… and ",
		"❌ Failed — no longer there (left the server or deleted) (1): failed\\_0000",
		"❌ Failed — gave up after too many failed attempts (999): failed\\_0001",
		"🔄 In progress: running\\_0000",
		fmt.Sprintf("⏳ Waiting: waits\\*bold\\* — Discord asked us to slow down, next try <t:%d:R>", until.Unix()),
		"🕓 To do (2000)",
	} {
		if !strings.Contains(content, want) {
			t.Errorf("lacks %q:\n%s", want, content)
		}
	}
	if len(components) != 1 {
		t.Errorf("an unfinished action needs its Cancel button, got %v", components)
	}
}

func TestRenderEnds(t *testing.T) {
	now := time.Now()
	user := "42"
	cases := []struct {
		name   string
		tasks  []row
		cancel bool
		want   string
	}{
		{"finished", rows(40, "done"), false, "**Finished: 40 of 40 done.**"},
		{"finished with failures", append(rows(38, "done"), rows(2, "failed")...), false, "**Finished: 38 of 40 done, 2 failed.**"},
		{"cancelled", append(rows(12, "done"), rows(28, "cancelled")...), true, "**Cancelled by <@42>: 12 of 40 done, 28 cancelled, nothing undone.**"},
		{"cancelling", append(append(rows(12, "done"), rows(1, "running")...), rows(27, "cancelled")...), true,
			"Cancelled by <@42>: what is in progress finishes, nothing else starts."},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			act := testAction(t, "en-US")
			if tc.cancel {
				act.cancelledAt, act.cancelledBy = &now, &user
			}
			content, components, err := render(act, tc.tasks, now)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(content, tc.want) {
				t.Errorf("lacks %q:\n%s", tc.want, content)
			}
			if len(components) != 0 {
				t.Errorf("a finished or cancelled action offers %v", components)
			}
		})
	}
}

func TestRenderSpeaksTheGuildsLanguage(t *testing.T) {
	act := testAction(t, "de")
	act.cancelledAt, act.cancelledBy = new(time.Now()), new("42")
	content, _, err := render(act, append(rows(12, "done"), rows(28, "cancelled")...), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(content, "12 von 40 erledigt, 28 abgebrochen, nichts rückgängig gemacht") {
		t.Errorf("German:\n%s", content)
	}
}

// A kind's refusal (Do returned *Refused) is shown as the kind wrote it,
// beside the classified reasons the message words itself.
func TestRenderRefusedTasks(t *testing.T) {
	act := testAction(t, "en-US")
	tasks := append(rows(3, "done"), rows(2, "failed")...)
	for i := 3; i < 5; i++ {
		tasks[i].reason = refusedReason + "**Red** is at or above herald's highest role."
	}
	content, _, err := render(act, tasks, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"❌ Failed — **Red** is at or above herald's highest role. (2): failed\\_0000, failed\\_0001",
		"**Finished: 3 of 5 done, 2 failed.**"} {
		if !strings.Contains(content, want) {
			t.Errorf("lacks %q:\n%s", want, content)
		}
	}
}
