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
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/herald-bot/herald/internal/config"
	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/discord/transport"
	"github.com/herald-bot/herald/internal/gateway"
	"github.com/herald-bot/herald/internal/i18n"
	"github.com/herald-bot/herald/internal/work"
	"github.com/herald-bot/herald/locales"
)

// Latency is the ack latency of one handler at one rate, as the
// simulator measured it: from the interaction's creation to its callback.
type Latency struct {
	P50MS          float64 `json:"p50_ms"`
	P95MS          float64 `json:"p95_ms"`
	P99MS          float64 `json:"p99_ms"`
	MissedDeadline int     `json:"missed_deadline"`
	Interactions   int     `json:"interactions"`
}

// AckRate is one rate through both handlers.
type AckRate struct {
	RPS    int     `json:"rps"`
	Herald Latency `json:"herald"`
	Naive  Latency `json:"naive"`
}

// AckResult is what `herald bench ack --json` prints.
type AckResult struct {
	Rates []AckRate `json:"rates"`
}

// RunAck clicks a role-menu button rps times a second for d at each rate:
// once against herald's fast path (validate, enqueue a role change in
// Postgres, answer deferred) and once against a naive handler that makes
// the role change through discordgo before answering, each on its own
// simulator with Discord's limits.
func RunAck(ctx context.Context, db *pgxpool.Pool, rates []int, d time.Duration) (AckResult, error) {
	var res AckResult
	for _, rps := range rates {
		r := AckRate{RPS: rps}
		var err error
		if r.Herald, err = ackRun(ctx, rps, d, heraldHandler(db)); err != nil {
			return res, fmt.Errorf("herald at %d/s: %w", rps, err)
		}
		if r.Naive, err = ackRun(ctx, rps, d, naiveHandler); err != nil {
			return res, fmt.Errorf("naive at %d/s: %w", rps, err)
		}
		res.Rates = append(res.Rates, r)
	}
	return res, nil
}

// roleArgs is the job herald's handler enqueues: add a role.
type roleArgs struct{ GuildID, UserID, RoleID string }

func (roleArgs) Kind() string { return "bench_role_add" }

type roleWorker struct{ river.WorkerDefaults[roleArgs] }

// Work is empty: the benchmark measures the answer, not the role change.
func (roleWorker) Work(context.Context, *river.Job[roleArgs]) error { return nil }

// handler connects one way of answering to a simulator and returns a stop
// function.
type handler func(ctx context.Context, w *world, role string) (stop func(), err error)

func heraldHandler(db *pgxpool.Pool) handler {
	return func(ctx context.Context, w *world, role string) (func(), error) {
		reg := work.NewRegistry()
		work.Register(reg, roleWorker{})
		jobs, err := work.NewClient(db, work.Options{Registry: reg, Lanes: config.LaneWorkers{Interactive: 20, Events: 10, Sync: 5, Background: 2},
			ShutdownTimeout: time.Second, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			return nil, err
		}
		if err := jobs.Start(ctx); err != nil {
			return nil, err
		}
		catalog, err := i18n.New(locales.FS)
		if err != nil {
			return nil, err
		}
		router := gateway.NewRouter()
		router.Control("bench", 1, func(ctx context.Context, in *gateway.Interaction) (*discordgo.InteractionResponse, error) {
			err := in.Enqueue(ctx, 1, work.IntentEvent, river.InsertManyParams{
				Args:       roleArgs{GuildID: in.GuildID, UserID: in.Member.User.ID, RoleID: role},
				InsertOpts: &river.InsertOpts{Queue: string(work.Interactive)},
			})
			return &discordgo.InteractionResponse{Type: discordgo.InteractionResponseDeferredMessageUpdate}, err
		})
		e := transport.New(transport.Config{ApplicationID: w.sim.BotUserID()})
		rt, err := transport.Rewrite(e.RoundTripper(), w.url+"/api/v10")
		if err != nil {
			return nil, err
		}
		gw, err := gateway.Open(ctx, gateway.Options{Token: w.token, Client: &http.Client{Transport: rt}, Router: router,
			Catalog: catalog, DB: db, Jobs: jobs, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			return nil, err
		}
		return func() { gw.Close(); work.Stop(jobs, time.Second, time.Second) }, waitReady(gw.Ready)
	}
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

func waitReady(ready func() error) error {
	deadline := time.Now().Add(10 * time.Second)
	for ready() != nil {
		if time.Now().After(deadline) {
			return ready()
		}
		time.Sleep(10 * time.Millisecond)
	}
	return nil
}

// ackRun clicks at rps for d and reads the simulator's ack latencies.
func ackRun(ctx context.Context, rps int, d time.Duration, h handler) (Latency, error) {
	w, err := newWorld(1, nil)
	if err != nil {
		return Latency{}, err
	}
	defer w.close()
	const members = 200
	f := sim.Fixture{Name: "ack", Channels: []sim.FixtureChannel{{Name: "roles", Type: 0}},
		Roles: []sim.FixtureRole{{Name: "news", Permissions: "0", Position: 1}}}
	for i := range members {
		f.Members = append(f.Members, sim.FixtureMember{Username: "m" + itoa(i)})
	}
	f.BotRole = &sim.FixtureRole{Name: "herald", Permissions: "268438528", Position: 2} // Manage Roles, View, Send, Read History
	g, err := w.sim.LoadFixture(f)
	if err != nil {
		return Latency{}, err
	}
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
	tick := time.NewTicker(time.Second / time.Duration(rps))
	defer tick.Stop()
	for i := range n {
		<-tick.C
		in, err := w.sim.Interact(sim.InteractionRequest{GuildID: g.ID, ChannelID: g.Channels[0].ID, UserID: g.Members[i%members].ID,
			Kind: "component", CustomID: "bench:1:role", MessageID: msg.ID})
		if err != nil {
			return Latency{}, err
		}
		ids = append(ids, in.ID)
	}
	// Every interaction has had its 3 seconds.
	time.Sleep(3500 * time.Millisecond)
	lat := Latency{Interactions: n}
	var ms []float64
	for _, id := range ids {
		st, _ := w.sim.Interaction(id)
		if !st.Acked || st.AckLatencyMS == nil || *st.AckLatencyMS > 3000 {
			lat.MissedDeadline++
			continue
		}
		ms = append(ms, *st.AckLatencyMS)
	}
	slices.Sort(ms)
	lat.P50MS, lat.P95MS, lat.P99MS = percentile(ms, 50, n), percentile(ms, 95, n), percentile(ms, 99, n)
	return lat, nil
}

// percentile of all n interactions, counting those never answered as
// slower than any answered one (so a missed deadline raises p99).
func percentile(sorted []float64, p float64, n int) float64 {
	if n == 0 {
		return 0
	}
	i := int(float64(n)*p/100+0.5) - 1
	i = max(i, 0)
	if i >= len(sorted) {
		return 3000 // beyond Discord's deadline
	}
	return sorted[i]
}
