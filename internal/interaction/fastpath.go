package interaction

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/herald-bot/herald/internal/discord/rest"
	"github.com/herald-bot/herald/internal/discord/transport"
	"github.com/herald-bot/herald/internal/i18n"
	"github.com/herald-bot/herald/internal/work"
)

// ackTimeout bounds the whole fast path: Discord drops an interaction not
// answered within 3 seconds.
const ackTimeout = 3 * time.Second

// Config configures a FastPath.
type Config struct {
	Mux     *Mux
	Catalog *i18n.Catalog
	// DB and Jobs hold the work handlers enqueue; Discord sends the answers.
	DB         *pgxpool.Pool
	Jobs       *work.Client
	Discord    *rest.Client
	Registerer prometheus.Registerer
	Logger     *slog.Logger
}

// FastPath answers interactions: route, let the handler validate and
// write its work, commit, answer, then release the work.
type FastPath struct {
	o Config
	metrics
	idle idleTracker
}

// NewFastPath builds the fast path and registers its metrics.
func NewFastPath(o Config) (*FastPath, error) {
	if o.Mux == nil || o.Catalog == nil || o.DB == nil || o.Jobs == nil || o.Discord == nil || o.Logger == nil {
		return nil, errors.New("interaction: FastPath needs Mux, Catalog, DB, Jobs, Discord and Logger")
	}
	return &FastPath{o: o, metrics: newMetrics(o.Registerer)}, nil
}

// Handle answers one interaction, as the gateway delivers it. Work is
// durable before the answer and never overtakes it. An interaction
// nothing handles — a retired control, a forged custom_id, a command
// herald no longer has — gets an ephemeral note in the member's language
// and changes nothing; so does a handler that fails or panics.
func (f *FastPath) Handle(i *discordgo.Interaction) {
	received := time.Now()
	afterIdle := f.idle.firstAfter(received)
	ctx, cancel := context.WithTimeout(context.Background(), ackTimeout)
	defer cancel()
	in := &Interaction{Interaction: i, Localizer: f.o.Catalog.For(localesOf(i)), Received: received, fp: f}
	log := f.o.Logger.With("interaction_id", i.ID, "type", i.Type.String())
	var resp *discordgo.InteractionResponse
	outcome := "routed"
	h, ok := f.o.Mux.match(i, in)
	if !ok {
		log.Info("outdated or unknown interaction")
		resp, outcome = Ephemeral(in.Localizer.T("interaction.outdated", nil)), "outdated"
	} else {
		log = log.With("route", in.Path)
		var err error
		if resp, err = run(ctx, h, in); err == nil && in.tx != nil {
			err = in.tx.Commit(ctx)
		}
		switch {
		case err == nil:
		case errors.Is(err, ErrReplay):
			outcome = "replay"
		default:
			log.Error("interaction handler failed", "err", err)
			resp, outcome = Ephemeral(in.Localizer.T("interaction.failed", nil)), "failed"
		}
		if err != nil {
			if in.tx != nil {
				in.tx.Rollback(context.WithoutCancel(ctx))
			}
			in.held = nil
		}
	}
	var err error
	if outcome == "replay" {
		// The first delivery did the work and answered; answering again
		// would only earn Discord's 40060.
		f.dedupeHits.Inc()
	} else if err = f.respond(ctx, i, resp); err != nil {
		log.Warn("interaction answer failed", "err", err)
		outcome = "unanswered"
	}
	took := time.Since(received)
	f.ackLatency.WithLabelValues(outcome).Observe(took.Seconds())
	f.eventsPerInteraction.Observe(float64(len(in.held)))
	if err != nil || took > ackTimeout {
		f.timeouts.Inc()
		if afterIdle {
			f.firstAfterIdleFailures.Inc()
		}
	}
	// The work runs whether or not the answer got through: it is durable.
	if err := work.Release(context.WithoutCancel(ctx), f.o.DB, in.held); err != nil {
		log.Warn("jobs stay held until their hold ends", "err", err)
	}
}

// run calls the handler, turning a panic into an error so the member
// gets the "failed" answer and the process lives.
func run(ctx context.Context, h Handler, in *Interaction) (resp *discordgo.InteractionResponse, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("handler panicked: %v\n%s", p, debug.Stack())
		}
	}()
	resp, err = h(ctx, in)
	if err == nil && resp == nil {
		err = errors.New("handler returned no response")
	}
	return resp, err
}

// respond sends the answer at interactive priority. Discord's 40060,
// "already acknowledged", means an earlier delivery was answered: that is
// no failure.
func (f *FastPath) respond(ctx context.Context, i *discordgo.Interaction, resp *discordgo.InteractionResponse) error {
	err := f.o.Discord.Respond(transport.WithPriority(ctx, transport.PriorityInteractive), i.ID, i.Token, resp)
	var api *transport.APIError
	if errors.As(err, &api) && api.Code == 40060 {
		f.dedupeHits.Inc()
		return nil
	}
	return err
}
