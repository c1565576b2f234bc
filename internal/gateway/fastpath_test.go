package gateway

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/bwmarrin/discordgo"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/riverqueue/river"

	"github.com/herald-bot/herald/internal/config"
	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/discord/simtest"
	"github.com/herald-bot/herald/internal/discord/transport"
	"github.com/herald-bot/herald/internal/store/storetest"
	"github.com/herald-bot/herald/internal/testsupport/pgtest"
	"github.com/herald-bot/herald/internal/work"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// noteArgs is a test job: it notes whether its interaction was already
// answered when it ran.
type noteArgs struct{ InteractionID string }

func (noteArgs) Kind() string { return "test_note" }

type noteWorker struct {
	river.WorkerDefaults[noteArgs]
	s   *sim.Server
	ran chan bool
}

func (w *noteWorker) Work(_ context.Context, j *river.Job[noteArgs]) error {
	st, _ := w.s.Interaction(j.Args.InteractionID)
	w.ran <- st.Acked
	return nil
}

// The fast path commits the job with its ledger row, answers, and only
// then lets the job run; the same interaction delivered again enqueues
// nothing and counts as a dedupe hit.
func TestFastPathAnswersBeforeWorkAndIgnoresReplays(t *testing.T) {
	t.Parallel()
	s := simtest.New(t)
	g := s.CreateGuild(sim.DefaultFixture())
	pool := storetest.Pool(t)
	worker := &noteWorker{s: s.Server, ran: make(chan bool, 4)}
	reg := work.NewRegistry()
	work.Register(reg, worker)
	jobs, err := work.NewClient(pool, work.Options{Registry: reg, Lanes: config.LaneWorkers{Interactive: 1, Events: 1, Sync: 1, Background: 1},
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if err := jobs.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { work.Stop(jobs, 0, 0) })

	router := NewRouter()
	router.Control("tickets", 1, func(ctx context.Context, in *Interaction) (*discordgo.InteractionResponse, error) {
		err := in.Enqueue(ctx, 1, work.IntentEvent, river.InsertManyParams{Args: noteArgs{InteractionID: in.ID},
			InsertOpts: &river.InsertOpts{Queue: string(work.Interactive)}})
		return &discordgo.InteractionResponse{Type: discordgo.InteractionResponseDeferredChannelMessageWithSource,
			Data: &discordgo.InteractionResponseData{Flags: discordgo.MessageFlagsEphemeral}}, err
	})
	e := transport.New(transport.Config{ApplicationID: s.BotUserID()})
	rt, _ := transport.Rewrite(e.RoundTripper(), s.URL+"/api/v10")
	var logs syncBuffer
	metrics := prometheus.NewRegistry()
	gw, err := Open(t.Context(), Options{Token: simtest.Token, Client: &http.Client{Transport: rt}, Router: router, Catalog: catalog(t),
		DB: pool, Jobs: jobs, Registerer: metrics, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gw.Close() })
	var mu sync.Mutex
	var delivered *discordgo.InteractionCreate
	gw.Discord().AddHandler(func(_ *discordgo.Session, ic *discordgo.InteractionCreate) {
		mu.Lock()
		delivered = ic
		mu.Unlock()
	})
	eventually(t, "ready", func() bool { return gw.Ready() == nil && gw.Guilds() == 1 })

	var msg struct{ ID string }
	s.Do("POST", "/channels/"+g.Channel("general")+"/messages", map[string]any{"content": "Open a ticket"}).JSON(t, &msg)
	in := s.Interact(sim.InteractionRequest{GuildID: g.ID, ChannelID: g.Channel("general"), UserID: g.Member("dave"),
		Kind: "component", CustomID: "tickets:1:open", MessageID: msg.ID})
	if acked := <-worker.ran; !acked {
		t.Fatal("the job ran before the interaction was answered")
	}
	if st := s.Interaction(in.ID); st.AckType != int(discordgo.InteractionResponseDeferredChannelMessageWithSource) {
		t.Errorf("ack type = %d, want a deferred message", st.AckType)
	}

	// Discord delivers the same interaction again (a replay after RESUME).
	mu.Lock()
	again := delivered
	mu.Unlock()
	gw.onInteraction(gw.dg, again)
	var jobsFor, ledger int
	pool.QueryRow(t.Context(), `SELECT count(*) FROM river_job WHERE kind = 'test_note'`).Scan(&jobsFor)
	pool.QueryRow(t.Context(), `SELECT count(*) FROM interaction_ledger WHERE event_id = $1`, in.ID).Scan(&ledger)
	if jobsFor != 1 || ledger != 1 {
		t.Errorf("after a replay: %d jobs, %d ledger rows; want 1 and 1", jobsFor, ledger)
	}
	if n := testutil.ToFloat64(gw.dedupeHits); n != 1 {
		t.Errorf("dedupe hits = %v, want 1", n)
	}
	if n := testutil.CollectAndCount(gw.eventsPerInteraction); n != 1 {
		t.Errorf("events-per-interaction series = %d", n)
	}
	if strings.Contains(logs.String(), "interaction answer failed") {
		t.Errorf("the replay's 40060 was treated as a failure:\n%s", logs.String())
	}
}

// An answer that cannot reach Discord within 3 seconds counts as a
// timeout, and, being the first interaction after an idle spell, as a
// cold-start failure.
func TestTimeoutsAreCounted(t *testing.T) {
	t.Parallel()
	s := simtest.New(t)
	g := s.CreateGuild(sim.DefaultFixture())
	s.SetFault(sim.Fault{Route: "POST /interactions/{interaction_id}/{interaction_token}/callback", LatencyMS: 3500})
	var logs syncBuffer
	gw, _ := open(t, s, nil, &logs)
	eventually(t, "ready", func() bool { return gw.Ready() == nil && gw.Guilds() == 1 })
	s.Interact(sim.InteractionRequest{GuildID: g.ID, ChannelID: g.Channel("general"), UserID: g.Member("bob"), Kind: "command", Name: "gone"})
	eventually(t, "timeout counted", func() bool { return testutil.ToFloat64(gw.timeouts) == 1 })
	if n := testutil.ToFloat64(gw.firstAfterIdleFailures); n != 1 {
		t.Errorf("first-after-idle failures = %v, want 1", n)
	}
}
