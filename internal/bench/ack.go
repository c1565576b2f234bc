package bench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/herald-bot/herald/internal/app"
	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/discord/transport"
	"github.com/herald-bot/herald/internal/feature"
	"github.com/herald-bot/herald/internal/interaction"
	"github.com/herald-bot/herald/internal/outbox"
	"github.com/herald-bot/herald/internal/work"
)

// Latency is the ack latency of one handler at one rate, as the
// simulator measured it: from the interaction's creation to its callback.
type Latency struct {
	P50MS          float64 `json:"p50_ms"`
	P95MS          float64 `json:"p95_ms"`
	P99MS          float64 `json:"p99_ms"`
	MissedDeadline int     `json:"missed_deadline"`
	// Busy counts answers that refused the work ("busy, try again"):
	// herald shedding load it could not make durable in time.
	Busy         int `json:"busy"`
	Interactions int `json:"interactions"`
	// SentRPS is the rate the clicks really went out at.
	SentRPS float64 `json:"sent_rps"`
}

// AckRate is one rate through every handler: herald; the floor, herald
// answering without touching Postgres; and the naive handler.
type AckRate struct {
	RPS    int     `json:"rps"`
	Herald Latency `json:"herald"`
	Floor  Latency `json:"floor"`
	Naive  Latency `json:"naive"`
	// HeraldOverFloorP99 is herald's p99 over the floor's: what making the
	// work durable costs.
	HeraldOverFloorP99 float64 `json:"herald_over_floor_p99"`
}

// AckResult is what `herald bench ack --json` prints.
type AckResult struct {
	// Seconds is how long each rate ran.
	Seconds float64   `json:"seconds"`
	Rates   []AckRate `json:"rates"`
}

// RunAck clicks a role-menu button rps times a second for d at each rate,
// against three handlers, each on its own simulator with Discord's
// limits: herald — built by app.New exactly as `herald run` builds it,
// plus a bench feature whose button enqueues a role change; the floor —
// the same herald whose button answers without touching Postgres; and a
// naive handler that makes the role change through discordgo before
// answering. dbURL is a migrated database herald may fill.
func RunAck(ctx context.Context, dbURL string, rates []int, d time.Duration) (AckResult, error) {
	res := AckResult{Seconds: d.Seconds()}
	for _, rps := range rates {
		r := AckRate{RPS: rps}
		for _, h := range []struct {
			name string
			out  *Latency
			run  handler
		}{{"herald", &r.Herald, heraldHandler(dbURL, true)}, {"floor", &r.Floor, heraldHandler(dbURL, false)}, {"naive", &r.Naive, naiveHandler}} {
			var err error
			if *h.out, err = ackRun(ctx, rps, d, h.run); err != nil {
				return res, fmt.Errorf("%s at %d/s: %w", h.name, rps, err)
			}
		}
		if r.Floor.P99MS > 0 {
			r.HeraldOverFloorP99 = r.Herald.P99MS / r.Floor.P99MS
		}
		res.Rates = append(res.Rates, r)
	}
	return res, nil
}

// roleArgs is the job the bench feature enqueues: add a role.
type roleArgs struct{ GuildID, UserID, RoleID string }

func (roleArgs) Kind() string { return "bench_role_add" }

type roleWorker struct{ river.WorkerDefaults[roleArgs] }

// Work is empty: the benchmark measures the answer, not the role change.
func (roleWorker) Work(context.Context, *river.Job[roleArgs]) error { return nil }

// clickID is the bench feature's button.
const clickID = "bench:1:role"

// benchFeature is a role-menu button as a feature on herald's kit: the
// click enqueues the role change (durable) or does nothing (the floor),
// and answers with a deferred update.
func benchFeature(role string, durable bool) feature.Feature {
	return feature.Feature{Name: "bench", Build: func(k feature.Kit) error {
		k.Routes.Component(clickID, func(ctx context.Context, in *interaction.Interaction) (*discordgo.InteractionResponse, error) {
			if !durable {
				return interaction.DeferredUpdate(), nil
			}
			err := in.Enqueue(ctx, outbox.IntentEvent, river.InsertManyParams{
				Args:       roleArgs{GuildID: in.GuildID, UserID: in.UserID(), RoleID: role},
				InsertOpts: &river.InsertOpts{Queue: string(work.Interactive)},
			})
			return interaction.DeferredUpdate(), err
		})
		work.Register(k.Jobs, roleWorker{})
		return nil
	}}
}

// handler connects one way of answering to a simulator and returns a stop
// function.
type handler func(ctx context.Context, w *world, role string) (stop func(), err error)

func heraldHandler(dbURL string, durable bool) handler {
	return func(ctx context.Context, w *world, role string) (func(), error) {
		return startHerald(ctx, w, dbURL, benchFeature(role, durable))
	}
}

// startHerald builds herald with app.New exactly as `herald run` does,
// plus extra features, on w and an emptied dbURL, and returns once it is
// ready.
func startHerald(ctx context.Context, w *world, dbURL string, extra ...feature.Feature) (stop func(), err error) {
	if err := emptyTables(ctx, dbURL); err != nil {
		return nil, err
	}
	env := w.heraldEnv(dbURL)
	cfg, err := app.LoadConfig(func(k string) (string, bool) { v, ok := env[k]; return v, ok }, extra...)
	if err != nil {
		return nil, err
	}
	a, err := app.New(ctx, cfg, slog.New(slog.DiscardHandler), extra...)
	if err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- a.Run(runCtx) }()
	stop = func() { cancel(); <-done }
	if err := waitReady(a.AdminAddr()); err != nil {
		stop()
		return nil, err
	}
	return stop, nil
}

// emptyTables starts each run from empty tables (all but the migrations'
// own and the webhook proxy's token key, which a migration makes once),
// so no run pays for the rows (and index pages) an earlier one left.
func emptyTables(ctx context.Context, dbURL string) error {
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return fmt.Errorf("bench database: %w", errors.Unwrap(err))
	}
	defer conn.Close(ctx)
	var tables string
	if err := conn.QueryRow(ctx, `SELECT string_agg(quote_ident(tablename), ', ') FROM pg_tables
		WHERE schemaname = current_schema() AND tablename NOT IN ('river_migration', 'herald_schema_migrations', 'webhookproxy_secret')`).Scan(&tables); err != nil {
		return err
	}
	_, err = conn.Exec(ctx, `TRUNCATE `+tables)
	return err
}

// naiveHandler does the role change through stock discordgo, then answers:
// the work sits between the click and the answer.
func naiveHandler(_ context.Context, w *world, role string) (func(), error) {
	s, err := discordgo.New("Bot " + w.token)
	if err != nil {
		return nil, err
	}
	rt, err := transport.Rewrite(http.DefaultTransport, w.url+"/api/v10")
	if err != nil {
		return nil, err
	}
	s.Client = &http.Client{Transport: rt, Timeout: 20 * time.Second}
	s.AddHandler(func(s *discordgo.Session, ic *discordgo.InteractionCreate) {
		if err := s.GuildMemberRoleAdd(ic.GuildID, ic.Member.User.ID, role); err != nil {
			return
		}
		s.InteractionRespond(ic.Interaction, &discordgo.InteractionResponse{Type: discordgo.InteractionResponseDeferredMessageUpdate})
	})
	ready := make(chan struct{})
	s.AddHandlerOnce(func(*discordgo.Session, *discordgo.Ready) { close(ready) })
	if err := s.Open(); err != nil {
		return nil, err
	}
	select {
	case <-ready:
	case <-time.After(10 * time.Second):
		s.Close()
		return nil, errors.New("naive session never got READY")
	}
	return func() { s.Close() }, nil
}

// waitReady polls herald's /readyz until it answers 200.
func waitReady(adminAddr string) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		res, err := http.Get("http://" + adminAddr + "/readyz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("readyz %d", res.StatusCode)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("herald not ready after 10s: %w", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// ackRun clicks at rps for d and reads the simulator's ack latencies.
func ackRun(ctx context.Context, rps int, d time.Duration, h handler) (Latency, error) {
	const members = 200
	w, g, err := guildWorld(1, sim.Fixture{Name: "ack", Channels: []sim.FixtureChannel{{Name: "roles", Type: 0}},
		Roles:   []sim.FixtureRole{{Name: "news", Permissions: "0", Position: 1}},
		BotRole: &sim.FixtureRole{Name: "herald", Permissions: "268438528", Position: 2}, // Manage Roles, View, Send, Read History
	}, members)
	if err != nil {
		return Latency{}, err
	}
	defer w.close()
	var msg struct{ ID string }
	if err := w.call("POST", "/channels/"+g.Channels[0].ID+"/messages", map[string]string{"content": "Pick a role"}, &msg); err != nil {
		return Latency{}, err
	}
	stop, err := h(ctx, w, g.Roles[0].ID)
	if err != nil {
		return Latency{}, err
	}
	defer stop()

	n := int(float64(rps) * d.Seconds())
	ids := make([]string, 0, n)
	start := time.Now()
	for i := range n {
		// Paced by the schedule, not a ticker, which drops ticks when the
		// loop falls behind: the clicks catch up instead.
		time.Sleep(time.Until(start.Add(time.Duration(i) * time.Second / time.Duration(rps))))
		in, err := w.sim.Interact(sim.InteractionRequest{GuildID: g.ID, ChannelID: g.Channels[0].ID, UserID: g.Members[i%members].ID,
			Kind: "component", CustomID: clickID, MessageID: msg.ID})
		if err != nil {
			return Latency{}, err
		}
		ids = append(ids, in.ID)
	}
	sent := float64(n) / time.Since(start).Seconds()
	awaitAnswers(w, ids)
	return acks(w, ids, sent), nil
}

// awaitAnswers returns once every interaction among ids is answered or
// has had Discord's 3 seconds; what is still out then is a miss. The
// last answers come in meanwhile, so each poll asks only for those still
// out, and renders nothing.
func awaitAnswers(w *world, ids []string) {
	out := ids
	_ = until(3500*time.Millisecond, "every click answered", func() bool {
		out = w.sim.Unanswered(out)
		return len(out) == 0
	})
}

// acks reads how the simulator saw interactions answered: latencies, the
// answers that refused the work (busy), and the misses — never answered,
// or after Discord's 3 s — which count as 3,000 ms in the percentiles.
func acks(w *world, ids []string, sentRPS float64) Latency {
	n := len(ids)
	lat := Latency{Interactions: n, SentRPS: sentRPS}
	var ms []float64
	for _, id := range ids {
		st, _ := w.sim.Interaction(id)
		if !st.Acked || st.AckLatencyMS == nil || *st.AckLatencyMS > 3000 {
			lat.MissedDeadline++
			continue
		}
		if st.AckType == int(discordgo.InteractionResponseChannelMessageWithSource) {
			lat.Busy++
		}
		ms = append(ms, *st.AckLatencyMS)
	}
	slices.Sort(ms)
	lat.P50MS, lat.P95MS, lat.P99MS = rank(ms, 50, n, 3000), rank(ms, 95, n, 3000), rank(ms, 99, n, 3000)
	return lat
}
