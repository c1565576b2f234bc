package followup

import (
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/herald-bot/herald/internal/discord/rest"
	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/discord/simtest"
	"github.com/herald-bot/herald/internal/discord/transport"
	"github.com/herald-bot/herald/internal/store/storetest"
	"github.com/herald-bot/herald/internal/testsupport/pgtest"
	"github.com/herald-bot/herald/internal/work"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// setup answers one interaction deferred and returns a sender for it.
func setup(t *testing.T, b Budget) (*Sender, *simtest.Sim, sim.InteractionCreated) {
	t.Helper()
	pool := storetest.Pool(t)
	s := simtest.New(t)
	g := s.CreateGuild(sim.DefaultFixture())
	in := s.Interact(sim.InteractionRequest{GuildID: g.ID, ChannelID: g.Channel("general"), UserID: g.Member("bob"), Kind: "command", Name: "status"})
	if r := s.DoAs("POST", "/interactions/"+in.ID+"/"+in.Token+"/callback", "", map[string]any{"type": 5}); r.Status != 204 {
		t.Fatalf("deferring the interaction: %d %s", r.Status, r.Body)
	}
	e := transport.New(transport.Config{ApplicationID: s.BotUserID()})
	discord := rest.New(e, s.URL+"/api/v10", simtest.Token, s.BotUserID())
	return NewSender(pool, discord, b, prometheus.NewRegistry()), s, in
}

// Past the budget, updates merge into the last message: five updates make
// three messages, the third carrying the last three updates.
func TestBudgetMergesBeyondMax(t *testing.T) {
	t.Parallel()
	snd, s, in := setup(t, Budget{Max: 3})
	var got []Result
	for i := range 5 {
		r, err := snd.Send(t.Context(), work.Interactive, in.ID, in.Token, "step "+string(rune('1'+i)))
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, r)
	}
	want := []Result{Sent, Sent, Sent, Merged, Merged}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("results = %v, want %v", got, want)
		}
	}
	if n := s.Interaction(in.ID).Followups; n != 3 {
		t.Errorf("follow-ups = %d, want 3", n)
	}
	var last discordgo.Message
	s.DoAs("GET", "/webhooks/"+s.BotUserID()+"/"+in.Token+"/messages/"+lastMessage(t, snd, in.ID), "", nil).JSON(t, &last)
	if last.Content != "step 3\nstep 4\nstep 5" {
		t.Errorf("merged message = %q", last.Content)
	}
	if n := testutil.ToFloat64(snd.count.WithLabelValues("interactive", "merged")); n != 2 {
		t.Errorf("merged counter = %v", n)
	}
	if n := testutil.ToFloat64(snd.interactions); n != 1 {
		t.Errorf("interactions with follow-ups = %v, want 1 (3 sent messages over 1 interaction)", n)
	}
}

// Background updates beyond the budget are dropped and counted; events
// are never dropped, whatever the policy says.
func TestBudgetDropsByPolicy(t *testing.T) {
	t.Parallel()
	snd, s, in := setup(t, Budget{Max: 1, Policies: map[work.Lane]Policy{work.Background: Drop, work.Events: Drop}})
	for _, step := range []struct {
		lane work.Lane
		want Result
	}{{work.Background, Sent}, {work.Background, Dropped}, {work.Events, Merged}} {
		r, err := snd.Send(t.Context(), step.lane, in.ID, in.Token, "update")
		if err != nil || r != step.want {
			t.Fatalf("%s: %v, %v; want %s", step.lane, r, err, step.want)
		}
	}
	if n := s.Interaction(in.ID).Followups; n != 1 {
		t.Errorf("follow-ups = %d, want 1", n)
	}
}

// Updates closer together than the coalesce window merge even within the
// budget.
func TestCoalesceWindow(t *testing.T) {
	t.Parallel()
	snd, s, in := setup(t, Budget{Max: 10, Window: time.Hour})
	for _, want := range []Result{Sent, Merged, Merged} {
		if r, err := snd.Send(t.Context(), work.Sync, in.ID, in.Token, "x"); err != nil || r != want {
			t.Fatalf("got %v, %v; want %s", r, err, want)
		}
	}
	if n := s.Interaction(in.ID).Followups; n != 1 {
		t.Errorf("follow-ups = %d, want 1", n)
	}
	var last discordgo.Message
	s.DoAs("GET", "/webhooks/"+s.BotUserID()+"/"+in.Token+"/messages/"+lastMessage(t, snd, in.ID), "", nil).JSON(t, &last)
	if last.Content != "x\nx\nx" {
		t.Errorf("coalesced message = %q", last.Content)
	}
}

func lastMessage(t *testing.T, snd *Sender, interactionID string) string {
	t.Helper()
	var id string
	if err := snd.db.QueryRow(t.Context(), `SELECT last_message_id FROM interaction_messages WHERE interaction_id = $1`, interactionID).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}
