package work_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/herald-bot/herald/internal/discord/rest"
	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/discord/simtest"
	"github.com/herald-bot/herald/internal/discord/transport"
	"github.com/herald-bot/herald/internal/store/storetest"
	"github.com/herald-bot/herald/internal/synctarget"
	"github.com/herald-bot/herald/internal/testsupport/clockwatch"
	"github.com/herald-bot/herald/internal/testsupport/wait"
	"github.com/herald-bot/herald/internal/work"
	"github.com/herald-bot/herald/internal/work/worktest"
)

// postArgs is a job that posts (or edits) one message through the REST
// client, as a feature's job would.
type postArgs struct {
	ChannelID string
	MessageID string // set: edit this message instead
	Nonce     string
}

func (postArgs) Kind() string { return "test_post" }

type postWorker struct {
	river.WorkerDefaults[postArgs]
	discord *rest.Client
	runs    chan error
}

// Work sets no priority or max wait itself: the lane middleware does.
func (w *postWorker) Work(ctx context.Context, j *river.Job[postArgs]) error {
	content := "from job " + j.Args.Nonce
	var err error
	if j.Args.MessageID != "" {
		_, err = w.discord.EditMessage(ctx, j.Args.ChannelID, j.Args.MessageID, rest.MessageEdit{Content: &content})
	} else {
		_, err = w.discord.CreateMessage(ctx, j.Args.ChannelID, rest.NewMessage{Content: content, Nonce: j.Args.Nonce})
	}
	w.runs <- err
	return err
}

// discord is a REST client to s with an engine of its own.
func discord(s *simtest.Sim, cfg transport.Config) *rest.Client {
	cfg.ApplicationID = s.ApplicationID()
	return rest.New(transport.New(cfg), s.URL+"/api/v10", simtest.Token, s.ApplicationID())
}

// herald is one process's job side: a REST client and a River client.
func herald(t *testing.T, pool *pgxpool.Pool, s *simtest.Sim) (*work.Client, *postWorker) {
	t.Helper()
	w := &postWorker{discord: discord(s, transport.Config{}), runs: make(chan error, 8)}
	return worktest.Started(t, pool, func(r *work.Registry) { work.Register(r, w) }), w
}

// Discord's 30 s rate limit (6 s on a simulator at time scale 0.2) leaves
// the job waiting — the call returns at once as rate limited because the
// lane middleware set a max wait, and the job is snoozed with no worker
// busy — and a herald restarted during the wait resumes that same job
// afterwards, not a copy.
func TestRateLimitedJobWaitsAndSurvivesRestart(t *testing.T) {
	t.Parallel()
	const window = 6 * time.Second // 30 s at time scale 0.2
	s := simtest.New(t, simtest.WithOptions(sim.Options{TimeScale: 0.2}))
	g := s.CreateGuild(sim.DefaultFixture())
	ch := g.Channel("general")
	s.SetLimits(sim.LimitChange{Route: "POST /channels/{channel_id}/messages", Limit: 1, WindowMS: 30000})
	pool := storetest.Pool(t)
	first, w := herald(t, pool, s)
	s.Do("POST", "/channels/"+ch+"/messages", map[string]any{"content": "uses the window"})
	res, err := first.Insert(t.Context(), postArgs{ChannelID: ch}, &river.InsertOpts{Queue: string(work.Interactive)})
	if err != nil {
		t.Fatal(err)
	}
	// Without the lane's max wait the call would sleep 6 s in the engine,
	// holding its worker; with it, the call comes back rate limited.
	if err := <-w.runs; !errors.As(err, new(*transport.RateLimitedError)) {
		t.Fatalf("first attempt: %v, want a RateLimitedError at once", err)
	}
	var st work.State
	wait.Until(t, "waiting", func() bool {
		st, _ = work.JobState(t.Context(), first, res.Job.ID)
		return st.Name == "waiting" && st.Reason == work.ReasonRateLimited
	})
	if wait := time.Until(st.Until); wait > window {
		t.Fatalf("waiting %s, want at most Discord's %s", wait, window)
	}
	// River's completer records the snooze in batches, so the row may
	// still say running for a moment after the worker returned; it must
	// stop long before the wait ends.
	wait.Until(t, "the job to free its worker", func() bool {
		var running int
		pool.QueryRow(t.Context(), `SELECT count(*) FROM river_job WHERE state = 'running'`).Scan(&running)
		return running == 0
	})
	if time.Now().After(st.Until) {
		t.Errorf("the job held its worker until its wait was over (%s)", st.Until.Format(time.RFC3339Nano))
	}
	if err := work.Stop(first, time.Second, time.Second); err != nil { // herald stops mid-wait
		t.Fatal(err)
	}

	second, w2 := herald(t, pool, s)
	defer work.Stop(second, time.Second, time.Second)
	select {
	case err := <-w2.runs:
		if err != nil {
			t.Fatalf("resumed attempt: %v", err)
		}
	case <-time.After(window + 5*time.Second):
		t.Fatal("the job did not resume after the restart")
	}
	wait.Until(t, "done", func() bool { st, _ := work.JobState(t.Context(), second, res.Job.ID); return st.Name == "done" })
	var jobs int
	pool.QueryRow(t.Context(), `SELECT count(*) FROM river_job WHERE kind = 'test_post'`).Scan(&jobs)
	if jobs != 1 || len(s.Messages(ch)) != 2 {
		t.Errorf("%d jobs and %d messages; want the one job and its one message", jobs, len(s.Messages(ch)))
	}
}

// A message create whose answer is lost is resent with its nonce and
// enforce_nonce, and Discord keeps exactly one message.
func TestUnknownOutcomeMakesOneMessage(t *testing.T) {
	t.Parallel()
	s := simtest.New(t)
	g := s.CreateGuild(sim.DefaultFixture())
	ch := g.Channel("general")
	s.SetFault(sim.Fault{Route: "POST /channels/{channel_id}/messages", DropAfterApply: 1})
	c, w := herald(t, storetest.Pool(t), s)
	defer work.Stop(c, time.Second, time.Second)
	if _, err := c.Insert(t.Context(), postArgs{ChannelID: ch, Nonce: "ticket-7-opened"}, &river.InsertOpts{Queue: string(work.Events)}); err != nil {
		t.Fatal(err)
	}
	if err := <-w.runs; err != nil {
		t.Fatalf("job: %v", err)
	}
	if msgs := s.Messages(ch); len(msgs) != 1 {
		t.Fatalf("messages = %d, want exactly 1", len(msgs))
	}
}

// Editing a message that was deleted for good fails target_missing after
// one attempt, and nothing is re-created.
func TestDeletedTargetFailsOnce(t *testing.T) {
	t.Parallel()
	s := simtest.New(t)
	g := s.CreateGuild(sim.DefaultFixture())
	ch := g.Channel("roles")
	var msg struct{ ID string }
	s.Do("POST", "/channels/"+ch+"/messages", map[string]any{"content": "menu"}).JSON(t, &msg)
	s.Do("DELETE", "/channels/"+ch+"/messages/"+msg.ID, nil)
	c, w := herald(t, storetest.Pool(t), s)
	defer work.Stop(c, time.Second, time.Second)
	res, err := c.Insert(t.Context(), postArgs{ChannelID: ch, MessageID: msg.ID}, &river.InsertOpts{Queue: string(work.Sync), MaxAttempts: 5})
	if err != nil {
		t.Fatal(err)
	}
	<-w.runs
	wait.Until(t, "failed", func() bool {
		st, _ := work.JobState(t.Context(), c, res.Job.ID)
		return st.Name == "failed" && st.Reason == work.ReasonTargetMissing && st.Attempts == 1
	})
	if n := len(s.Messages(ch)); n != 0 {
		t.Errorf("%d messages: a missing target must not be re-created", n)
	}
}

// Seed 000's controlled-overload test, on the simulator's fake clock: five
// revisions of one menu saved in quick succession fold into one sync job;
// its edit meets an exhausted bucket, goes out exactly when the bucket
// resets and not a millisecond sooner, and publishes the newest revision
// once.
func TestFiveRevisionsPublishOnceOnAVirtualClock(t *testing.T) {
	t.Parallel()
	s := simtest.New(t, simtest.WithFakeClock())
	g := s.CreateGuild(sim.DefaultFixture())
	ch := g.Channel("roles")
	var msg struct{ ID string }
	s.Do("POST", "/channels/"+ch+"/messages", map[string]any{"content": "menu rev 0"}).JSON(t, &msg)
	s.SetLimits(sim.LimitChange{Route: "PATCH /channels/{channel_id}/messages/{message_id}", Limit: 1, WindowMS: 5000})
	s.Do("PATCH", "/channels/"+ch+"/messages/"+msg.ID, map[string]any{"content": "someone else's edit"}) // empties the bucket for 5 s
	pool := storetest.Pool(t)
	jobs := worktest.Client(t, pool, func(*work.Registry) {})
	var jobID int64
	for rev := int64(1); rev <= 5; rev++ {
		tx, err := pool.Begin(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		id, _, err := synctarget.Request(t.Context(), tx, jobs, "menu:"+msg.ID, rev, postArgs{ChannelID: ch, MessageID: msg.ID}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(t.Context()); err != nil {
			t.Fatal(err)
		}
		if jobID != 0 && id != jobID {
			t.Fatalf("revision %d made job %d, want it folded into %d", rev, id, jobID)
		}
		jobID = id
	}

	clk := clockwatch.Watch(s.Clock)
	client := discord(s, transport.Config{Clock: clk, QueueTimeout: -1})
	published := make(chan int64, 5)
	done := make(chan error, 1)
	go func() {
		done <- synctarget.Run(t.Context(), pool, jobID, "menu:"+msg.ID, func(ctx context.Context, rev int64) error {
			content := "menu rev " + strconv.FormatInt(rev, 10)
			_, err := client.EditMessage(ctx, ch, msg.ID, rest.MessageEdit{Content: &content})
			published <- rev
			return err
		})
	}()
	// The engine learns the bucket from its first answer: a 429 naming the
	// 5 s reset. Nothing more may go out before the clock reaches it.
	edits := func() int {
		n := 0
		for _, r := range s.Server.Requests() {
			if r.Method == "PATCH" {
				n++
			}
		}
		return n
	}
	wait.Until(t, "first attempt", func() bool { return edits() == 2 })
	wait.Until(t, "the engine to wait on its clock", func() bool { return clk.Pending() > 0 })
	// The engine sends a held request only when one of its timers fires:
	// a step that fires none lets nothing go.
	clk.Advance(4999 * time.Millisecond)
	if n := clk.Woken(); n != 0 {
		t.Fatalf("a step to +4.999s woke %d of the engine's timers: the edit would go before the reset", n)
	}
	if n := edits(); n != 2 {
		t.Fatalf("%d edits before the reset, want 2 (the other edit and the rate-limited attempt)", n)
	}
	clk.Advance(time.Millisecond)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if rev := <-published; rev != 5 || len(published) != 0 {
		t.Fatalf("published revision %d (and %d more), want 5 once", rev, len(published))
	}
	var visible struct{ Content string }
	s.Do("GET", "/channels/"+ch+"/messages/"+msg.ID, nil).JSON(t, &visible)
	if visible.Content != "menu rev 5" {
		t.Errorf("visible = %q", visible.Content)
	}
	var rev int64
	pool.QueryRow(t.Context(), `SELECT published_revision FROM sync_targets WHERE target = $1`, "menu:"+msg.ID).Scan(&rev)
	if rev != 5 {
		t.Errorf("recorded published revision %d, want 5", rev)
	}
}
