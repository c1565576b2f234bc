package demo_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/herald-bot/herald/internal/demo"
	"github.com/herald-bot/herald/internal/heraldtest"
	"github.com/herald-bot/herald/internal/testsupport/logbuf"
)

// childEnv makes the test binary run as `herald run`, for the demo to
// kill and restart.
const childEnv = "HERALD_DEMO_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		os.Exit(heraldtest.RunChild())
	}
	os.Exit(m.Run())
}

// small is the story scaled down: every lane and every fault, the
// kill -9 included, in well under a minute.
func small() demo.Scenario {
	sc := demo.Default()
	sc.Members, sc.Tickets, sc.Closes = 20, 5, 3
	sc.Notifications, sc.Services = 200, 4
	sc.Menus, sc.EditsPerMenu = 3, 3
	sc.Span = 8 * time.Second
	sc.FaultAt, sc.FaultFor = 2*time.Second, 3*time.Second
	sc.StormAt, sc.StormFor = 5*time.Second, time.Second
	sc.KillAt = 6 * time.Second
	sc.Drain = 60 * time.Second
	return sc
}

// The scaled-down story, with herald as a real child process killed with
// SIGKILL in the middle: nothing acknowledged is lost or done twice, the
// naive bot plays the same story beside it, and the JSON summary has
// every field the issue names.
func TestScenario(t *testing.T) {
	var logs logbuf.Buffer
	var views []demo.Progress
	d, err := demo.Start(t.Context(), small(), demo.Options{
		Herald:        func() *exec.Cmd { return exec.Command(os.Args[0], "-test.run=^$") },
		HeraldLog:     &logs,
		Progress:      func(p demo.Progress) { views = append(views, p) },
		ProgressEvery: 500 * time.Millisecond,
		ExtraEnv:      []string{childEnv + "=1"},
	})
	if err != nil {
		t.Fatalf("%v\nherald's log:\n%s", err, logs.String())
	}
	defer func() {
		if err := d.Close(); err != nil {
			t.Error(err)
		}
	}()
	sum, err := d.Play(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.MarshalIndent(sum, "", "  ")
	t.Logf("summary:\n%s", b)
	if sum.Lost != 0 || sum.Duplicates != 0 || !sum.Drained {
		t.Errorf("lost %d, duplicates %d, drained %v: %v\nherald's log:\n%s", sum.Lost, sum.Duplicates, sum.Drained, sum.Problems, logs.String())
	}
	if n := sum.NotificationsAccepted; n == 0 || n > sum.NotificationsDelivered || n > sum.NotificationsSent {
		t.Errorf("notifications: %d sent, %d accepted, %d delivered: every accepted one must be delivered",
			sum.NotificationsSent, n, sum.NotificationsDelivered)
	}
	// The naive bot played the same story on its own simulator: the
	// same clicks and opens, calls counted there in every kind of work.
	if n := sum.Naive; n == nil || n.Lost+n.Duplicates != naiveWrong(sum) {
		t.Fatalf("the naive side is missing, or its wrong work is not split by category: %+v", sum.ByCategory)
	}
	if sum.NaiveAPICalls != sum.Naive.APICalls {
		t.Errorf("naive bot: %d calls, the summary says %d", sum.Naive.APICalls, sum.NaiveAPICalls)
	}
	for i, c := range sum.ByCategory {
		if n := sum.Naive.ByCategory[i]; c.Name == "member roles" && n.Work != c.Work {
			t.Errorf("member clicks: herald got %d, the naive bot %d: the same plan", c.Work, n.Work)
		}
		if c.Work > 0 && (c.Calls == 0 || c.Naive == 0) {
			t.Errorf("%s: %d pieces of work, herald %d calls, naive bot %d: a side did not play it", c.Name, c.Work, c.Calls, c.Naive)
		}
	}
	if sum.Interactions == 0 || sum.Acked == 0 || sum.AckP50MS <= 0 || sum.HeraldDownSeconds <= 0 {
		t.Errorf("interactions %d, acked %d, ack p50 %v ms, herald down %v s: the scenario did not run as written",
			sum.Interactions, sum.Acked, sum.AckP50MS, sum.HeraldDownSeconds)
	}
	if sum.ServerErrors == 0 || len(sum.RateLimitedByScope) == 0 {
		t.Errorf("server errors %d, 429s %v: the faults did not reach herald", sum.ServerErrors, sum.RateLimitedByScope)
	}
	var fields map[string]any
	if err := json.Unmarshal(b, &fields); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"interactions", "ack_p50_ms", "ack_p95_ms", "ack_p99_ms", "api_calls", "naive_api_calls",
		"rate_limited_by_scope", "invalid_requests", "coalesced", "deduplicated", "lost", "duplicates"} {
		if _, ok := fields[f]; !ok {
			t.Errorf("the JSON summary lacks %q", f)
		}
	}
	killed := false
	for _, v := range views {
		killed = killed || v.Herald != "running"
	}
	if len(views) < 2 || !killed {
		t.Errorf("%d live views, one showing herald down: %v", len(views), killed)
	}
}

// naiveWrong is the naive bot's wrong work over the categories, replies
// never sent aside.
func naiveWrong(sum demo.Summary) int {
	n := 0
	for _, c := range sum.ByCategory {
		if c.Name != "interaction answers" {
			n += c.NaiveWrong
		}
	}
	return n
}
