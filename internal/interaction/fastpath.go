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
	"github.com/herald-bot/herald/internal/outbox"
	"github.com/herald-bot/herald/internal/work"
)

// Discord drops an interaction not answered within 3 seconds of its
// creation. The fast path gives the handler and its transaction
// durableBudget of that and keeps the rest for the answer; work that
// cannot be made durable in time is refused with "busy" and nothing
// enqueued, never left to Discord's "interaction failed".
const (
	ackTimeout    = 3 * time.Second
	durableBudget = 2 * time.Second
)

// After a failure the ledger check must leave answerReserve of Discord's
// window for the answer itself, and the rollback, which the answer never
// waits for, is bounded by cleanupTimeout, so a black-holed database
// holds no goroutine for long.
const (
	answerReserve  = 500 * time.Millisecond
	cleanupTimeout = time.Second
)

// Config configures a FastPath.
type Config struct {
	Mux     *Mux
	Catalog *i18n.Catalog
	// DB holds the work handlers enqueue, Writer writes it many
	// interactions at a time, Dispatch moves it into River once answered,
	// Jobs takes sync requests; Discord sends the answers.
	DB       *pgxpool.Pool
	Writer   *outbox.GroupWriter
	Dispatch *outbox.Dispatcher
	Jobs     *work.Client
	// Yield, when set, learns of each interaction, so jobs wait while a
	// rush of them leaves the process short of CPU.
	Yield      *work.Yield
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
	if o.Mux == nil || o.Catalog == nil || o.DB == nil || o.Writer == nil || o.Dispatch == nil || o.Jobs == nil || o.Discord == nil || o.Logger == nil {
		return nil, errors.New("interaction: FastPath needs Mux, Catalog, DB, Writer, Dispatch, Jobs, Discord and Logger")
	}
	return &FastPath{o: o, metrics: newMetrics(o.Registerer)}, nil
}

// Answer delivers an interaction's initial response: the gateway
// ingress sends it through the callback route (Handle), the Interactions
// Endpoint URL writes it as its HTTP response (Endpoint).
type Answer func(ctx context.Context, resp *discordgo.InteractionResponse) error

// Handle answers one interaction, as the gateway delivers it, through
// the callback route.
func (f *FastPath) Handle(i *discordgo.Interaction) {
	f.Serve(i, func(ctx context.Context, resp *discordgo.InteractionResponse) error { return f.respond(ctx, i, resp) })
}

// Serve decides one interaction's answer and has answer deliver it. Work
// is durable before the answer and never overtakes it: held jobs are
// released once answer returns. An interaction nothing handles — a
// retired control, a forged custom_id, a command herald no longer has —
// gets an ephemeral note in the member's language and changes nothing;
// so does a handler that fails or panics. A replay, or an interaction
// past Discord's 3 s, is not answered: answer is not called.
func (f *FastPath) Serve(i *discordgo.Interaction, answer Answer) {
	received := time.Now()
	f.o.Yield.Arrived()
	afterIdle := f.idle.firstAfter(received)
	log := f.o.Logger.With("interaction_id", i.ID, "type", i.Type.String())
	// After a RESUME Discord may deliver interactions it created before the
	// connection dropped; past 3 s it refuses any answer. If an earlier
	// delivery committed the work, its held jobs run anyway.
	if created, err := discordgo.SnowflakeTimestamp(i.ID); err == nil && received.Sub(created) > ackTimeout {
		log.Info("interaction older than Discord's 3 s: not answered", "age", received.Sub(created))
		f.ackLatency.WithLabelValues("too_old").Observe(received.Sub(created).Seconds())
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), ackTimeout)
	defer cancel()
	in := &Interaction{Interaction: i, Localizer: f.o.Catalog.For(localesOf(i)), Received: received, fp: f}
	resp, outcome := f.decide(ctx, in, log)
	var err error
	if outcome == "replay" {
		// The first delivery did the work and answered; answering again
		// would only earn Discord's 40060.
		f.dedupeHits.Inc()
	} else if err = answer(ctx, resp); err != nil {
		log.Warn("interaction answer failed", "err", err)
		outcome = "unanswered"
	}
	took := time.Since(received)
	f.ackLatency.WithLabelValues(outcome).Observe(took.Seconds())
	f.eventsPerInteraction.Observe(float64(in.jobs))
	if err != nil || took > ackTimeout {
		f.timeouts.Inc()
		if afterIdle {
			f.firstAfterIdleFailures.Inc()
		}
	}
	// The work runs whether or not the answer got through: it is durable.
	f.o.Dispatch.Release(in.held...)
}

// decide routes in, runs its handler within durableBudget, writes and
// commits its work, and returns the answer with the outcome it is counted
// as (routed, outdated, replay, busy, unconfirmed, failed).
func (f *FastPath) decide(ctx context.Context, in *Interaction, log *slog.Logger) (*discordgo.InteractionResponse, string) {
	h, ok := f.o.Mux.Match(in)
	if !ok {
		log.Info("outdated or unknown interaction")
		return Ephemeral(in.Localizer.T("interaction.outdated", nil)), "outdated"
	}
	log = log.With("route", in.Path)
	dctx, cancel := context.WithTimeout(ctx, durableBudget)
	defer cancel()
	resp, err := run(dctx, h, in)
	if err != nil {
		f.abandon(in)
		switch {
		case errors.Is(err, ErrReplay):
			return nil, "replay"
		case dctx.Err() != nil && ctx.Err() == nil, outbox.Unwritten(err):
			log.Warn("work not durable within its budget: refused as busy", "budget", durableBudget, "err", err)
			return Ephemeral(in.Localizer.T("interaction.busy", nil)), "busy"
		case f.recorded(in):
			// An earlier delivery did the work; the handler tripped over it.
			return nil, "replay"
		}
		log.Error("interaction handler failed", "err", err)
		return Ephemeral(in.Localizer.T("interaction.failed", nil)), "failed"
	}
	err = in.write(dctx)
	switch {
	case err == nil && in.tx != nil:
		if err = in.tx.Commit(dctx); err == nil {
			return resp, "routed"
		}
	case err == nil:
		return resp, "routed"
	case errors.Is(err, ErrReplay):
		f.abandon(in)
		return nil, "replay"
	case in.tx != nil || outbox.Unwritten(err):
		// No COMMIT was sent, or nothing reached Postgres: certainly
		// nothing is recorded.
		f.abandon(in)
		log.Warn("work not durable within its budget: refused as busy", "budget", durableBudget, "err", err)
		return Ephemeral(in.Localizer.T("interaction.busy", nil)), "busy"
	}
	return f.ambiguous(in, resp, err, log)
}

// recorded reports whether the ledger holds this interaction's work.
// It is read only after a failure, so the common path stays one
// statement.
func (f *FastPath) recorded(in *Interaction) bool {
	ctx, cancel := f.checkContext(in)
	defer cancel()
	done, err := outbox.Recorded(ctx, f.o.DB, in.ID)
	return err == nil && done
}

// checkContext bounds a read after a failure so that the answer still
// reaches Discord in time.
func (f *FastPath) checkContext(in *Interaction) (context.Context, context.CancelFunc) {
	return context.WithDeadline(context.Background(), in.Received.Add(ackTimeout-answerReserve))
}

// ambiguous answers after writing the work failed — its statement or its
// COMMIT — which may still land (its answer lost in a restart or a
// timeout, or the statement still in the network): outbox.Settle, on a new
// connection, decides for good whether the work is there, fencing it off
// if not. Landed work whose outbox row this delivery does not know is
// swept after its hold.
func (f *FastPath) ambiguous(in *Interaction, resp *discordgo.InteractionResponse, writeErr error, log *slog.Logger) (*discordgo.InteractionResponse, string) {
	ctx, cancel := f.checkContext(in)
	defer cancel()
	landed, err := false, errors.New("the handler wrote no ledger key to settle")
	if len(in.keys) > 0 {
		landed, err = outbox.Settle(ctx, f.o.DB, in.keys[0])
	}
	if err == nil && landed {
		f.rollback(in)
		log.Warn("writing the work failed but it is recorded: answering as done", "err", writeErr)
		return resp, "routed"
	}
	f.abandon(in)
	if err == nil {
		log.Warn("writing the work failed and nothing was recorded: refused as busy", "err", writeErr)
		return Ephemeral(in.Localizer.T("interaction.busy", nil)), "busy"
	}
	log.Error("writing the work failed and the ledger cannot be read: outcome unconfirmed", "err", writeErr, "check", err)
	return Ephemeral(in.Localizer.T("interaction.unconfirmed", nil)), "unconfirmed"
}

// abandon rolls back what the handler wrote and forgets its work.
func (f *FastPath) abandon(in *Interaction) {
	f.rollback(in)
	in.held, in.jobs = nil, 0
}

// rollback ends the handler's transaction, if any, within cleanupTimeout
// and without holding up the answer: an uncommitted transaction can never
// commit; after a failed COMMIT, whose outcome the ledger decides, it only
// releases the connection.
func (f *FastPath) rollback(in *Interaction) {
	if in.tx == nil {
		return
	}
	tx := in.tx
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
		defer cancel()
		tx.Rollback(ctx)
	}()
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
