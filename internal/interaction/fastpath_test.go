package interaction_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/herald-bot/herald/internal/app"
	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/feature"
	"github.com/herald-bot/herald/internal/heraldtest"
	"github.com/herald-bot/herald/internal/interaction"
	"github.com/herald-bot/herald/internal/outbox"
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
	sim *sim.Server
	ran chan bool
}

func (w *noteWorker) Work(_ context.Context, j *river.Job[noteArgs]) error {
	st, _ := w.sim.Interaction(j.Args.InteractionID)
	w.ran <- st.Acked
	return nil
}

// hogArgs is a test job that takes every connection the job pool will
// give and holds them until the test ends.
type hogArgs struct{}

func (hogArgs) Kind() string { return "test_hog" }

type hogWorker struct {
	river.WorkerDefaults[hogArgs]
	db      *pgxpool.Pool
	holding chan int
	release chan struct{}
}

func (w *hogWorker) Work(ctx context.Context, _ *river.Job[hogArgs]) error {
	var held []*pgxpool.Conn
	defer func() {
		for _, c := range held {
			c.Release()
		}
	}()
	for {
		actx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		c, err := w.db.Acquire(actx)
		cancel()
		if err != nil {
			break
		}
		held = append(held, c)
	}
	w.holding <- len(held)
	<-w.release
	return nil
}

// desk is a test feature: "Open ticket" saves a row and enqueues a
// note in the fast-path transaction; "boom" fails after writing, "panic"
// panics; "hog" starts a job that exhausts the job pool.
type desk struct {
	worker    *noteWorker
	hog       *hogWorker
	mu        sync.Mutex
	delivered *discordgo.Interaction
}

func (f *desk) feature() feature.Feature {
	return feature.Feature{Name: "desk", Build: func(k feature.Kit) error {
		k.Routes.Component("desk:1:open", func(ctx context.Context, in *interaction.Interaction) (*discordgo.InteractionResponse, error) {
			f.mu.Lock()
			f.delivered = in.Interaction
			f.mu.Unlock()
			tx, err := in.Tx(ctx)
			if err != nil {
				return nil, err
			}
			if _, err := tx.Exec(ctx, `INSERT INTO guild_settings (guild_id) VALUES ($1)`, in.GuildID); err != nil {
				return nil, err
			}
			err = in.Enqueue(ctx, outbox.IntentEvent, river.InsertManyParams{Args: noteArgs{InteractionID: in.ID},
				InsertOpts: &river.InsertOpts{Queue: string(work.Interactive)}})
			return interaction.Deferred(true), err
		})
		k.Routes.Component("desk:1:boom", func(ctx context.Context, in *interaction.Interaction) (*discordgo.InteractionResponse, error) {
			tx, err := in.Tx(ctx)
			if err != nil {
				return nil, err
			}
			if _, err := tx.Exec(ctx, `INSERT INTO guild_settings (guild_id) VALUES ($1)`, in.GuildID); err != nil {
				return nil, err
			}
			return nil, errors.New("database down")
		})
		k.Routes.Component("desk:1:panic", func(context.Context, *interaction.Interaction) (*discordgo.InteractionResponse, error) {
			panic("a bug")
		})
		k.Routes.Component("desk:1:mute", func(context.Context, *interaction.Interaction) (*discordgo.InteractionResponse, error) {
			return nil, nil
		})
		k.Routes.Component("desk:1:hog", func(ctx context.Context, in *interaction.Interaction) (*discordgo.InteractionResponse, error) {
			return interaction.DeferredUpdate(), in.Enqueue(ctx, outbox.IntentEvent, river.InsertManyParams{Args: hogArgs{},
				InsertOpts: &river.InsertOpts{Queue: string(work.Events)}})
		})
		f.hog.db = k.DB
		work.Register(k.Jobs, f.worker)
		work.Register(k.Jobs, f.hog)
		return nil
	}}
}

func start(t *testing.T, opts ...heraldtest.Option) (*heraldtest.Herald, *desk, *discordgo.Message) {
	t.Helper()
	f := &desk{worker: &noteWorker{ran: make(chan bool, 4)}, hog: &hogWorker{holding: make(chan int, 1), release: make(chan struct{})}}
	h := heraldtest.New(t, append(opts, heraldtest.WithFeatures(f.feature()))...)
	t.Cleanup(func() { close(f.hog.release) })
	f.worker.sim = h.Sim.Server
	return h, f, h.Post(h.Channel("general"), map[string]any{"content": "Open a ticket"})
}

func count(t *testing.T, h *heraldtest.Herald, query string, args ...any) int {
	t.Helper()
	var n int
	if err := h.DB.QueryRow(t.Context(), query, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// ingress is one way interactions reach herald.
type ingress struct {
	name string
	opts []heraldtest.Option
	// via is how the simulator sees the answers come.
	via string
}

// ingresses are both: the gateway (answers through the callback route)
// and the Interactions Endpoint URL (answers in the HTTP response).
var ingresses = []ingress{{"gateway", nil, sim.ViaCallback}, {"http", []heraldtest.Option{heraldtest.OverHTTP()}, sim.ViaResponse}}

// bothIngresses runs test once per ingress: the fast path behaves the same
// whichever way an interaction came.
func bothIngresses(t *testing.T, test func(t *testing.T, in ingress)) {
	t.Parallel()
	for _, in := range ingresses {
		t.Run(in.name, func(t *testing.T) {
			t.Parallel()
			test(t, in)
		})
	}
}

// The fast path commits the handler's row and job with the ledger row,
// answers, and only then lets the job run. The same interaction delivered
// again writes nothing, enqueues nothing, answers nothing and counts as a
// dedupe hit.
func TestAnswersBeforeWorkAndIgnoresReplays(t *testing.T) { bothIngresses(t, answersBeforeWork) }

func answersBeforeWork(t *testing.T, via ingress) {
	h, f, msg := start(t, via.opts...)
	in := h.As("dave").Click(msg, "desk:1:open")
	if acked := <-f.worker.ran; !acked {
		t.Fatal("the job ran before the interaction was answered")
	}
	if st := in.Ack(); st.AckType != int(discordgo.InteractionResponseDeferredChannelMessageWithSource) || st.AnsweredVia != via.via {
		t.Errorf("answered with type %d via %q, want a deferred message via %q", st.AckType, st.AnsweredVia, via.via)
	}

	f.mu.Lock()
	again := f.delivered
	f.mu.Unlock()
	h.Deliver(again) // delivered again: a replay after RESUME, or of a captured request
	if jobs, ledger, rows := count(t, h, `SELECT count(*) FROM river_job WHERE kind = 'test_note'`),
		count(t, h, `SELECT count(*) FROM interaction_ledger WHERE event_id = $1`, in.ID),
		count(t, h, `SELECT count(*) FROM guild_settings`); jobs != 1 || ledger != 1 || rows != 1 {
		t.Errorf("after a replay: %d jobs, %d ledger rows, %d feature rows; want 1 of each", jobs, ledger, rows)
	}
	if m := h.Metrics(); !strings.Contains(m, "herald_interaction_dedupe_hits_total 1") ||
		!strings.Contains(m, `herald_ack_latency_seconds_count{outcome="replay"} 1`) {
		t.Errorf("dedupe not counted:\n%s", grep(m, "dedupe", "ack_latency_seconds_count"))
	}
	callbacks := 0
	for _, r := range h.Sim.Requests() {
		if r.Method == "POST" && strings.HasSuffix(r.Route, "/callback") {
			callbacks++
		}
	}
	if want := map[string]int{sim.ViaCallback: 1, sim.ViaResponse: 0}[via.via]; callbacks != want {
		t.Errorf("%d callbacks, want %d: a replay is not answered again", callbacks, want)
	}
}

// A handler that fails, panics or returns no answer leaves nothing
// behind: what it wrote is rolled back, the member gets "something went
// wrong" in their language, and herald goes on answering.
func TestFailingHandlersChangeNothing(t *testing.T) { bothIngresses(t, failingHandlers) }

func failingHandlers(t *testing.T, via ingress) {
	h, _, msg := start(t, via.opts...)
	for _, id := range []string{"desk:1:boom", "desk:1:panic", "desk:1:mute"} {
		if got := h.As("carol").Locale("fr").Click(msg, id).Reply(); !strings.Contains(got.Content, "Un problème") {
			t.Errorf("%s answered %q", id, got.Content)
		}
	}
	if n := count(t, h, `SELECT count(*) FROM guild_settings`); n != 0 {
		t.Errorf("%d rows left behind by a failed handler", n)
	}
	for _, want := range []string{"handler panicked: a bug", "handler returned no response"} {
		if !strings.Contains(h.Logs(), want) {
			t.Errorf("the log lacks %q", want)
		}
	}
	if h.As("carol").Click(msg, "desk:1:open").Ack().AckType == 0 {
		t.Error("herald stopped answering after a panic")
	}
}

// A control herald does not know — forged, foreign, retired — gets an
// ephemeral answer in the member's language, and nothing else happens.
func TestUnknownControlsAreAnsweredAsOutdated(t *testing.T) { bothIngresses(t, unknownControls) }

func unknownControls(t *testing.T, via ingress) {
	h, _, msg := start(t, via.opts...)
	before := len(h.Sim.Requests())
	for _, tc := range []struct{ customID, locale, want string }{
		{"not a herald id", "de", "nicht mehr aktuell"},
		{"desk:2:open", "fr", "plus à jour"}, // a version herald does not have
		{"polls:1:vote:1", "ko", "더 이상"},     // a feature that is not there
		{"desk:01:open", "en-US", "out of date"},
	} {
		got := h.As("bob").Locale(tc.locale).Click(msg, tc.customID).Reply()
		if !strings.Contains(got.Content, tc.want) || got.Flags&discordgo.MessageFlagsEphemeral == 0 {
			t.Errorf("%q (%s): answered %q (flags %d), want an ephemeral message containing %q", tc.customID, tc.locale, got.Content, got.Flags, tc.want)
		}
	}
	for _, r := range h.Sim.Requests()[before:] {
		if !strings.HasSuffix(r.Route, "/callback") && r.Method != "GET" {
			t.Errorf("unexpected call %s %s: an outdated control must change nothing", r.Method, r.Route)
		}
	}
	if n := count(t, h, `SELECT count(*) FROM river_job WHERE kind = 'test_note'`); n != 0 {
		t.Errorf("%d jobs enqueued by outdated controls", n)
	}
}

// An answer that cannot reach Discord within 3 seconds counts as a
// timeout and, being the first interaction after an idle spell, as a
// cold-start failure.
func TestTimeoutsAreCounted(t *testing.T) {
	t.Parallel()
	h, _, msg := start(t)
	h.Sim.SetFault(sim.Fault{Route: "POST /interactions/{interaction_id}/{interaction_token}/callback", LatencyMS: 3500})
	h.As("bob").Click(msg, "desk:9:gone")
	h.Eventually("timeout counted", func() bool {
		m := h.Metrics()
		return strings.Contains(m, "herald_interaction_timeouts_total 1") &&
			strings.Contains(m, "herald_interaction_first_after_idle_failures_total 1")
	})
}

// grep keeps the lines of a metrics page that mention any of words.
func grep(page string, words ...string) string {
	var out []string
	for _, line := range strings.Split(page, "\n") {
		for _, w := range words {
			if strings.Contains(line, w) {
				out = append(out, line)
				break
			}
		}
	}
	return strings.Join(out, "\n")
}

// Job workers holding every connection of their pool do not delay the
// fast path: it has connections of its own.
func TestFastPathDoesNotWaitBehindJobs(t *testing.T) {
	t.Parallel()
	h, f, msg := start(t)
	h.As("alice").Click(msg, "desk:1:hog").Ack()
	if n := <-f.hog.holding; n == 0 {
		t.Fatal("the hog got no connection")
	}
	in := h.As("dave").Click(msg, "desk:1:open")
	if st := in.Ack(); st.AckType != int(discordgo.InteractionResponseDeferredChannelMessageWithSource) || *st.AckLatencyMS > 3000 {
		t.Errorf("with the job pool exhausted the click was answered %+v", st)
	}
	if n := count(t, h, `SELECT count(*) FROM interaction_ledger WHERE event_id = $1`, in.ID); n != 1 {
		t.Errorf("ledger rows = %d: the work was not made durable", n)
	}
}

// A COMMIT whose answer is lost (the connection dies right after the
// server got it) has still landed: herald reads the ledger and answers as
// done, and the work runs once — instead of telling the member it failed.
func TestLostCommitThatLandedIsAnsweredAsDone(t *testing.T) {
	t.Parallel()
	h, f, msg := start(t, heraldtest.WithDatabaseProxy())
	h.DBProxy.CutAfterIn([]byte(app.FastPathPool), []byte("commit"))
	in := h.As("dave").Click(msg, "desk:1:open")
	if st := in.Ack(); st.AckType != int(discordgo.InteractionResponseDeferredChannelMessageWithSource) {
		t.Fatalf("answered with type %d, want the handler's deferred answer", st.AckType)
	}
	<-f.worker.ran
	if jobs := count(t, h, `SELECT count(*) FROM river_job WHERE kind = 'test_note'`); jobs != 1 {
		t.Errorf("%d jobs, want the one committed", jobs)
	}
	if !strings.Contains(h.Logs(), "writing the work failed but it is recorded") {
		t.Error("the lost COMMIT went unnoticed: the proxy did not cut it")
	}
}

// With the database black-holed (packets held, nothing closed) the fast
// path still answers within Discord's 3 s — "busy", with nothing enqueued
// — and works again once the network heals.
func TestBlackHoledDatabaseIsAnsweredBusy(t *testing.T) { bothIngresses(t, blackHoledDatabase) }

func blackHoledDatabase(t *testing.T, via ingress) {
	h, _, msg := start(t, append(via.opts, heraldtest.WithDatabaseProxy())...)
	h.DBProxy.Hold()
	busy := h.As("dave").Locale("de").Click(msg, "desk:1:open")
	if reply := busy.Reply(); !strings.Contains(reply.Content, "beschäftigt") {
		t.Errorf("answer = %q, want the German busy note", reply.Content)
	}
	if st := busy.Ack(); *st.AckLatencyMS > 3000 {
		t.Errorf("answered after %.0f ms", *st.AckLatencyMS)
	}
	h.DBProxy.Release()
	if st := h.As("dave").Click(msg, "desk:1:open").Ack(); st.AckType != int(discordgo.InteractionResponseDeferredChannelMessageWithSource) {
		t.Errorf("after the partition healed: answered %+v", st)
	}
	if n := count(t, h, `SELECT count(*) FROM interaction_ledger WHERE event_id = $1 AND NOT refused`, busy.ID); n != 0 {
		t.Errorf("the busy interaction left %d ledger rows", n)
	}
}

// After a RESUME, Discord may deliver an interaction created more than
// 3 s ago; it refuses any answer then, so herald sends none and runs
// nothing.
func TestInteractionsOlderThanDiscordsWindowAreNotAnswered(t *testing.T) { bothIngresses(t, tooOld) }

func tooOld(t *testing.T, via ingress) {
	h, f, msg := start(t, via.opts...)
	h.As("dave").Click(msg, "desk:1:open")
	<-f.worker.ran
	f.mu.Lock()
	late := *f.delivered
	f.mu.Unlock()
	created, _ := discordgo.SnowflakeTimestamp(late.ID)
	late.ID = strconv.FormatInt((created.Add(-4*time.Second).UnixMilli()-1420070400000)<<22, 10)
	h.Deliver(&late)
	if n := count(t, h, `SELECT count(*) FROM interaction_ledger`); n != 1 {
		t.Errorf("%d ledger rows, want only the first interaction's", n)
	}
	if !strings.Contains(h.Logs(), "older than Discord's 3 s") {
		t.Error("the late delivery was not recognised")
	}
}

// Every interaction, from either ingress, counts toward the rate above
// which jobs give way when the process is short of CPU: at
// HERALD_JOBS_YIELD_ABOVE=1 a single click is a rush (more than a
// quarter of an interaction in the 250 ms window), until it slides out.
func TestInteractionsCountTowardARush(t *testing.T) { bothIngresses(t, countTowardARush) }

func countTowardARush(t *testing.T, via ingress) {
	h, f, msg := start(t, append(via.opts, heraldtest.WithEnv(map[string]string{"HERALD_JOBS_YIELD_ABOVE": "1"}))...)
	if h.App.Yield().Rush() {
		t.Fatal("a rush before any interaction")
	}
	before := time.Now()
	h.As("dave").Click(msg, "desk:1:open").Ack()
	// The rush lasts 437.5 ms from the click's arrival; past 400 ms a
	// slow machine may have seen it end.
	if rush := h.App.Yield().Rush(); !rush && time.Since(before) < 400*time.Millisecond {
		t.Fatal("a click answered less than 400 ms ago is no rush at 1 interaction a second")
	}
	<-f.worker.ran
	h.Eventually("the click to slide out of the window", func() bool { return !h.App.Yield().Rush() })
}
