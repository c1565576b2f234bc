package followup

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/riverqueue/river"

	"github.com/herald-bot/herald/internal/discord/rest"
	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/discord/simtest"
	"github.com/herald-bot/herald/internal/discord/transport"
	"github.com/herald-bot/herald/internal/outbox"
	"github.com/herald-bot/herald/internal/store/storetest"
	"github.com/herald-bot/herald/internal/testsupport/pgtest"
	"github.com/herald-bot/herald/internal/work"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// world is one interaction answered deferred, its token in the ledger as
// the fast path leaves it, and a sender for it.
type world struct {
	snd *Sender
	s   *simtest.Sim
	in  sim.InteractionCreated
}

func setup(t *testing.T, b Budget) *world { return setupOn(t, b, simtest.New(t), true) }

// setupOn is setup on s, the interaction answered only when answered is
// set: one that Discord never saw answered has no usable token.
func setupOn(t *testing.T, b Budget, s *simtest.Sim, answered bool) *world {
	t.Helper()
	pool := storetest.Pool(t)
	g := s.CreateGuild(sim.DefaultFixture())
	in := s.Interact(sim.InteractionRequest{GuildID: g.ID, ChannelID: g.Channel("general"), UserID: g.Member("bob"), Kind: "command", Name: "status"})
	if answered {
		if r := s.DoAs("POST", "/interactions/"+in.ID+"/"+in.Token+"/callback", "", map[string]any{"type": 5, "data": map[string]any{"flags": 64}}); r.Status != 204 {
			t.Fatalf("deferring the interaction: %d %s", r.Status, r.Body)
		}
	}
	if _, err := pool.Exec(t.Context(), `INSERT INTO interaction_ledger (idempotency_key, event_id, token) VALUES ($1, $2, $3)`,
		in.ID+":1:view", in.ID, in.Token); err != nil {
		t.Fatal(err)
	}
	e := transport.New(transport.Config{ApplicationID: s.ApplicationID()})
	discord := rest.New(e, s.URL+"/api/v10", simtest.Token, s.ApplicationID())
	return &world{snd: NewSender(pool, discord, b, prometheus.NewRegistry()), s: s, in: in}
}

func (w *world) send(t *testing.T, lane work.Lane, key, content string) Result {
	t.Helper()
	r, err := w.snd.Send(t.Context(), Update{Lane: lane, InteractionID: w.in.ID, Key: key, Content: content})
	if err != nil {
		t.Fatalf("update %s: %v", key, err)
	}
	return r
}

// message reads one of the interaction's messages ("@original" or a
// follow-up's id).
func (w *world) message(t *testing.T, id string) discordgo.Message {
	t.Helper()
	var m discordgo.Message
	w.s.DoAs("GET", "/webhooks/"+w.s.ApplicationID()+"/"+w.in.Token+"/messages/"+id, "", nil).JSON(t, &m)
	return m
}

func (w *world) last(t *testing.T) string {
	t.Helper()
	var id string
	if err := w.snd.db.QueryRow(t.Context(), `SELECT last_message_id FROM interaction_messages WHERE interaction_id = $1`, w.in.ID).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// The first update fills the deferred reply; the budget (3, the reply
// included) allows two follow-ups; later updates merge into the last.
func TestBudgetMergesBeyondMax(t *testing.T) {
	t.Parallel()
	w := setup(t, Budget{Max: 3})
	var got []Result
	for i := range 5 {
		got = append(got, w.send(t, work.Interactive, fmt.Sprint("u", i), fmt.Sprint("step ", i+1)))
	}
	if want := []Result{Sent, Sent, Sent, Merged, Merged}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("results = %v, want %v", got, want)
	}
	if reply := w.message(t, original); reply.Content != "step 1" || reply.Flags&discordgo.MessageFlagsEphemeral == 0 {
		t.Errorf("reply = %q (flags %d), want the first step, still ephemeral", reply.Content, reply.Flags)
	}
	if n := w.s.Interaction(w.in.ID).Followups; n != 2 {
		t.Errorf("follow-ups = %d, want 2", n)
	}
	if last := w.message(t, w.last(t)); last.Content != "step 3\nstep 4\nstep 5" {
		t.Errorf("merged message = %q", last.Content)
	}
	if n := testutil.ToFloat64(w.snd.count.WithLabelValues("interactive", "merged")); n != 2 {
		t.Errorf("merged counter = %v", n)
	}
	if n := testutil.ToFloat64(w.snd.interactions); n != 1 {
		t.Errorf("interactions with messages = %v, want 1", n)
	}
}

// Background updates beyond the budget are dropped and counted; events
// are never dropped, whatever the policy says.
func TestBudgetDropsByPolicy(t *testing.T) {
	t.Parallel()
	w := setup(t, Budget{Max: 1, Policies: map[work.Lane]Policy{work.Background: Drop, work.Events: Drop}})
	for i, step := range []struct {
		lane work.Lane
		want Result
	}{{work.Background, Sent}, {work.Background, Dropped}, {work.Events, Merged}} {
		if r := w.send(t, step.lane, fmt.Sprint(i), "update"); r != step.want {
			t.Fatalf("%s: %v, want %s", step.lane, r, step.want)
		}
	}
	if n := w.s.Interaction(w.in.ID).Followups; n != 0 {
		t.Errorf("follow-ups = %d, want none: the reply holds everything", n)
	}
}

// Updates closer together than the coalesce window merge even within the
// budget.
func TestCoalesceWindow(t *testing.T) {
	t.Parallel()
	w := setup(t, Budget{Max: 10, Window: time.Hour})
	for i, want := range []Result{Sent, Merged, Merged} {
		if r := w.send(t, work.Sync, fmt.Sprint(i), "x"); r != want {
			t.Fatalf("got %v, want %s", r, want)
		}
	}
	if reply := w.message(t, original); reply.Content != "x\nx\nx" {
		t.Errorf("coalesced reply = %q", reply.Content)
	}
}

// An update sent again with its key — a job retried after any failure —
// repeats only an idempotent edit: no second message, no second merge.
func TestRetriedUpdatesAreNotRepeated(t *testing.T) {
	t.Parallel()
	w := setup(t, Budget{Max: 3})
	for range 2 {
		w.send(t, work.Interactive, "a", "first")
		w.send(t, work.Interactive, "b", "second")
	}
	if n := w.s.Interaction(w.in.ID).Followups; n != 1 {
		t.Errorf("follow-ups = %d, want 1", n)
	}
	if m := w.message(t, w.last(t)); m.Content != "second" {
		t.Errorf("follow-up = %q", m.Content)
	}
	w.send(t, work.Interactive, "c", "third")
	w.send(t, work.Interactive, "d", "fourth")
	w.send(t, work.Interactive, "d", "fourth")
	if m := w.message(t, w.last(t)); m.Content != "third\nfourth" {
		t.Errorf("after a repeated merge: %q", m.Content)
	}
}

// A follow-up whose answer is lost (Discord created it, the connection
// died) is not posted again: its content is merged into the last message
// by an edit, and the member never gets a second message — also when the
// job is retried afterwards.
func TestLostCreateIsReconciledNotResent(t *testing.T) {
	t.Parallel()
	w := setup(t, Budget{Max: 3})
	w.send(t, work.Interactive, "a", "ticket opened")
	w.s.SetFault(sim.Fault{Route: "POST /webhooks/{webhook_id}/{webhook_token}", DropAfterApply: 1})
	if r := w.send(t, work.Interactive, "b", "a moderator will answer"); r != Reconciled {
		t.Errorf("lost create = %s, want reconciled", r)
	}
	w.send(t, work.Interactive, "b", "a moderator will answer") // the job retried
	if n := w.s.Interaction(w.in.ID).Followups; n != 1 {
		t.Errorf("follow-ups = %d, want the one Discord created", n)
	}
	if reply := w.message(t, original); reply.Content != "ticket opened\na moderator will answer" {
		t.Errorf("reply = %q, want the lost follow-up merged into it", reply.Content)
	}
	if n := testutil.ToFloat64(w.snd.count.WithLabelValues("interactive", "reconciled")); n != 1 {
		t.Errorf("reconciled counter = %v", n)
	}
}

// A create marked as sending by a process that died before it learned
// the outcome is reconciled by the next attempt, not posted again.
func TestCrashAfterMarkIsReconciled(t *testing.T) {
	t.Parallel()
	w := setup(t, Budget{Max: 3})
	w.send(t, work.Interactive, "a", "first")
	u := Update{Lane: work.Interactive, InteractionID: w.in.ID, Key: "b", Content: "second"}
	if _, err := w.snd.plan(t.Context(), u); err != nil {
		t.Fatal(err)
	}
	if err := w.snd.mark(t.Context(), u, true); err != nil { // ...and the process died here
		t.Fatal(err)
	}
	if r := w.send(t, work.Interactive, "b", "second"); r != Reconciled {
		t.Errorf("retry after the crash = %s, want reconciled", r)
	}
	if n := w.s.Interaction(w.in.ID).Followups; n != 0 {
		t.Errorf("follow-ups = %d, want none posted after the crash", n)
	}
	if reply := w.message(t, original); !strings.HasSuffix(reply.Content, "second") {
		t.Errorf("reply = %q", reply.Content)
	}
}

// Once the token has expired nothing is sent; the job ends.
func TestExpiredToken(t *testing.T) {
	t.Parallel()
	w := setup(t, Budget{Max: 3})
	if _, err := w.snd.db.Exec(t.Context(), `UPDATE interaction_ledger SET token = NULL`); err != nil {
		t.Fatal(err)
	}
	_, err := w.snd.Send(t.Context(), Update{Lane: work.Interactive, InteractionID: w.in.ID, Key: "a", Content: "late"})
	if err == nil || !strings.Contains(err.Error(), "expired") {
		t.Errorf("err = %v", err)
	}
}

// Discord refusing the interaction's token while the ledger still holds
// it ends the update as an expired token does, counted by callers as a
// lost reply, never as a failure of the work: an answer that missed
// Discord's 3 s leaves no token (10015), and Discord's clock may end the
// 15 minutes first (50027).
func TestTokenRefusedByDiscord(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name     string
		answered bool
		wait     time.Duration
		code     int
	}{
		{"never answered", false, 0, 10015},
		{"past its life on Discord's clock", true, 16 * time.Minute, 50027},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := simtest.New(t, simtest.WithFakeClock())
			w := setupOn(t, Budget{Max: 3}, s, c.answered)
			s.Clock.Advance(c.wait)
			_, err := w.snd.Send(t.Context(), Update{Lane: work.Interactive, InteractionID: w.in.ID, Key: "a", Content: "done"})
			var api *transport.APIError
			if !errors.Is(err, outbox.ErrTokenExpired) || !errors.As(err, &api) || api.Code != c.code {
				t.Fatalf("err = %v, want the token expired, from Discord's %d", err, c.code)
			}
			var cancel *river.JobCancelError
			if !errors.As(err, &cancel) {
				t.Errorf("err = %v, want the job cancelled: no retry makes the token usable", err)
			}
		})
	}
}
