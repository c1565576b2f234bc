package progress_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/herald-bot/herald/internal/bulk/progress"
	"github.com/herald-bot/herald/internal/i18n"
)

func localizer(t *testing.T, locale string) *i18n.Localizer {
	t.Helper()
	c, err := i18n.Shipped()
	if err != nil {
		t.Fatal(err)
	}
	return c.For("", locale)
}

func testAction() progress.Action {
	return progress.Action{StartedBy: "42", Title: "Add <@&1> to every member with <@&2>", Planned: true,
		Created: time.Unix(1_800_000_000, 0)}
}

func rows(n int, state string) []progress.Task {
	out := make([]progress.Task, n)
	for i := range out {
		out[i] = progress.Task{Name: fmt.Sprintf("%s_%04d", state, i), State: state}
	}
	return out
}

func TestRenderStaysWithinDiscordsLimit(t *testing.T) {
	loc, act := localizer(t, "en-US"), testAction()
	now := time.Now()
	tasks := append(append(append(rows(2000, "done"), rows(1000, "failed")...), rows(1, "running")...), rows(2000, "pending")...)
	tasks[2000].Reason = "target_missing" // the first failure, for a reason of its own
	until := now.Add(30 * time.Second)
	tasks = append(tasks, progress.Task{Name: "waits*bold*", State: "pending", Reason: "rate_limited", Until: &until})
	content, open := progress.Render(loc, act, tasks, now)
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
	if !open {
		t.Error("an unfinished action must stay open to its Cancel button")
	}
}

func TestRenderEnds(t *testing.T) {
	now := time.Now()
	user := "42"
	cases := []struct {
		name   string
		tasks  []progress.Task
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
			act := testAction()
			if tc.cancel {
				act.CancelledAt, act.CancelledBy = &now, &user
			}
			content, open := progress.Render(localizer(t, "en-US"), act, tc.tasks, now)
			if !strings.Contains(content, tc.want) {
				t.Errorf("lacks %q:\n%s", tc.want, content)
			}
			if open {
				t.Error("a finished or cancelled action is still open to its Cancel button")
			}
		})
	}
}

func TestRenderSpeaksTheGuildsLanguage(t *testing.T) {
	act := testAction()
	act.CancelledAt, act.CancelledBy = new(time.Now()), new("42")
	content, _ := progress.Render(localizer(t, "de"), act, append(rows(12, "done"), rows(28, "cancelled")...), time.Now())
	if !strings.Contains(content, "12 von 40 erledigt, 28 abgebrochen, nichts rückgängig gemacht") {
		t.Errorf("German:\n%s", content)
	}
}

// A kind's refusal (Do returned *Refused) is shown as the kind wrote it,
// beside the classified reasons the message words itself.
func TestRenderRefusedTasks(t *testing.T) {
	tasks := append(rows(3, "done"), rows(2, "failed")...)
	for i := 3; i < 5; i++ {
		tasks[i].Reason = progress.RefusedPrefix + "**Red** is at or above herald's highest role."
	}
	content, _ := progress.Render(localizer(t, "en-US"), testAction(), tasks, time.Now())
	for _, want := range []string{"❌ Failed — **Red** is at or above herald's highest role. (2): failed\\_0000, failed\\_0001",
		"**Finished: 3 of 5 done, 2 failed.**"} {
		if !strings.Contains(content, want) {
			t.Errorf("lacks %q:\n%s", want, content)
		}
	}
}
