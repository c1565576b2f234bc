package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/herald-bot/herald/internal/discord/transport"
	"github.com/herald-bot/herald/internal/work"
)

// ackTimeout bounds the whole fast path: Discord drops an interaction not
// answered within 3 seconds.
const ackTimeout = 3 * time.Second

// onInteraction is the fast path: route, let the handler validate and
// enqueue its jobs, commit them with their ledger rows, answer, then
// release the jobs — so work is durable before the answer and never
// overtakes it. An interaction nothing handles — a retired control, a
// forged custom_id, a command herald no longer has — gets an ephemeral
// note in the member's language and changes nothing.
func (s *Session) onInteraction(_ *discordgo.Session, ic *discordgo.InteractionCreate) {
	received := time.Now()
	afterIdle := s.idle.firstAfter(received)
	ctx, cancel := context.WithTimeout(context.Background(), ackTimeout)
	defer cancel()
	i := ic.Interaction
	loc := s.catalog.For(localesOf(i))
	h, id, ok := s.router.route(i)
	outcome := "routed"
	var resp *discordgo.InteractionResponse
	in := &Interaction{Interaction: i, CustomID: id, Localizer: loc, Received: received, db: s.db, jobs: s.jobs}
	if ok {
		var err error
		if resp, err = h(ctx, in); err == nil && in.tx != nil {
			err = in.tx.Commit(ctx)
		}
		if err != nil {
			if in.tx != nil {
				in.tx.Rollback(context.WithoutCancel(ctx))
			}
			in.held = nil
			s.log.Error("interaction handler failed", "interaction_id", i.ID, "type", i.Type.String(), "err", err)
			resp, outcome = ephemeral(loc.T("interaction.failed", nil)), "failed"
		}
	} else {
		s.log.Info("outdated or unknown interaction", "interaction_id", i.ID, "type", i.Type.String())
		resp, outcome = ephemeral(loc.T("interaction.outdated", nil)), "outdated"
	}
	if in.replay {
		s.dedupeHits.Inc()
		outcome = "replay"
	}
	err := s.respond(ctx, i, resp, in.replay)
	if err != nil {
		s.log.Warn("interaction answer failed", "interaction_id", i.ID, "err", err)
		outcome = "unanswered"
	}
	took := time.Since(received)
	s.ackLatency.WithLabelValues(outcome).Observe(took.Seconds())
	s.eventsPerInteraction.Observe(float64(len(in.held)))
	if err != nil || took > ackTimeout {
		s.timeouts.Inc()
		if afterIdle {
			s.firstAfterIdleFailures.Inc()
		}
	}
	// The work runs whether or not the answer got through: it is durable.
	if err := work.Release(context.WithoutCancel(ctx), s.jobs, in.held); err != nil {
		s.log.Warn("jobs stay held until their hold ends", "interaction_id", i.ID, "err", err)
	}
}

func ephemeral(content string) *discordgo.InteractionResponse {
	return &discordgo.InteractionResponse{
		Type: discordgo.InteractionResponseChannelMessageWithSource,
		Data: &discordgo.InteractionResponseData{Content: content, Flags: discordgo.MessageFlagsEphemeral},
	}
}

// respond sends the initial response through herald's transport at
// interactive priority. It does not use discordgo's InteractionRespond,
// whose limiter keeps a bucket per interaction token forever. For a replay,
// Discord's "already acknowledged" (40060) means the first delivery was
// answered: that is success.
func (s *Session) respond(ctx context.Context, i *discordgo.Interaction, resp *discordgo.InteractionResponse, replay bool) error {
	body, err := json.Marshal(resp)
	if err != nil {
		return err
	}
	ctx = transport.WithPriority(ctx, transport.PriorityInteractive)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, discordgo.EndpointInteractionResponse(i.ID, i.Token), bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := s.client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode >= 300 {
		b, _ := io.ReadAll(io.LimitReader(res.Body, 512))
		var e struct{ Code int }
		if json.Unmarshal(b, &e) == nil && e.Code == 40060 && replay {
			return nil
		}
		return fmt.Errorf("callback answered %d: %s", res.StatusCode, b)
	}
	return nil
}

// fastPathMetrics are the boundary metrics of seed 001: ack latency,
// events per interaction, dedupe hits, timeouts and failures of the first
// interaction after an idle spell (cold start).
type fastPathMetrics struct {
	ackLatency             *prometheus.HistogramVec
	dedupeHits             prometheus.Counter
	eventsPerInteraction   prometheus.Histogram
	timeouts               prometheus.Counter
	firstAfterIdleFailures prometheus.Counter
}

func newFastPathMetrics(reg prometheus.Registerer) fastPathMetrics {
	m := fastPathMetrics{
		ackLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "herald_ack_latency_seconds",
			Help:    "From INTERACTION_CREATE received to the initial response answered, by outcome (routed, outdated, failed, replay, unanswered).",
			Buckets: []float64{.005, .01, .02, .05, .1, .25, .5, 1, 2, 3},
		}, []string{"outcome"}),
		dedupeHits: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "herald_interaction_dedupe_hits_total",
			Help: "Interactions delivered again whose work was already enqueued.",
		}),
		eventsPerInteraction: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "herald_events_per_interaction",
			Help:    "Jobs one interaction enqueued.",
			Buckets: []float64{0, 1, 2, 3, 5, 10},
		}),
		timeouts: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "herald_interaction_timeouts_total",
			Help: "Interactions not answered within Discord's 3 seconds.",
		}),
		firstAfterIdleFailures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "herald_interaction_first_after_idle_failures_total",
			Help: "Unanswered interactions that were the first after an idle spell (cold start).",
		}),
	}
	if reg != nil {
		reg.MustRegister(m.ackLatency, m.dedupeHits, m.eventsPerInteraction, m.timeouts, m.firstAfterIdleFailures)
	}
	return m
}

// idleSpell is how long without interactions makes the next one a "first
// after idle" (seed 001's cold-start failures).
const idleSpell = 5 * time.Minute

// idleTracker remembers when the last interaction arrived.
type idleTracker struct {
	mu   sync.Mutex
	last time.Time
}

// firstAfter reports whether the interaction received at t came after an
// idle spell, and records it.
func (it *idleTracker) firstAfter(t time.Time) bool {
	it.mu.Lock()
	defer it.mu.Unlock()
	first := it.last.IsZero() || t.Sub(it.last) > idleSpell
	it.last = t
	return first
}
