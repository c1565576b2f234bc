package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/herald-bot/herald/internal/discord/transport"
)

// ackTimeout bounds the whole fast path: Discord drops an interaction not
// answered within 3 seconds.
const ackTimeout = 3 * time.Second

// onInteraction is the fast path: route, let the handler answer, send the
// answer. An interaction nothing handles — a retired control, a forged
// custom_id, a command herald no longer has — gets an ephemeral note in
// the member's language and changes nothing.
func (s *Session) onInteraction(_ *discordgo.Session, ic *discordgo.InteractionCreate) {
	received := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), ackTimeout)
	defer cancel()
	i := ic.Interaction
	guildLocale := ""
	if i.GuildLocale != nil {
		guildLocale = string(*i.GuildLocale)
	}
	loc := s.catalog.For(string(i.Locale), guildLocale)
	h, id, ok := s.router.route(i)
	outcome := "routed"
	var resp *discordgo.InteractionResponse
	if ok {
		var err error
		resp, err = h(ctx, &Interaction{Interaction: i, CustomID: id, Localizer: loc, Received: received})
		if err != nil {
			s.log.Error("interaction handler failed", "interaction_id", i.ID, "type", i.Type.String(), "err", err)
			resp, outcome = ephemeral(loc.T("interaction.failed", nil)), "failed"
		}
	} else {
		s.log.Info("outdated or unknown interaction", "interaction_id", i.ID, "type", i.Type.String())
		resp, outcome = ephemeral(loc.T("interaction.outdated", nil)), "outdated"
	}
	if err := s.respond(ctx, i, resp); err != nil {
		s.log.Warn("interaction answer failed", "interaction_id", i.ID, "err", err)
		outcome = "unanswered"
	}
	s.ackLatency.WithLabelValues(outcome).Observe(time.Since(received).Seconds())
}

func ephemeral(content string) *discordgo.InteractionResponse {
	return &discordgo.InteractionResponse{
		Type: discordgo.InteractionResponseChannelMessageWithSource,
		Data: &discordgo.InteractionResponseData{Content: content, Flags: discordgo.MessageFlagsEphemeral},
	}
}

// respond sends the initial response through herald's transport at
// interactive priority. It does not use discordgo's InteractionRespond,
// whose limiter keeps a bucket per interaction token forever.
func (s *Session) respond(ctx context.Context, i *discordgo.Interaction, resp *discordgo.InteractionResponse) error {
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
		return fmt.Errorf("callback answered %d: %s", res.StatusCode, b)
	}
	return nil
}

func newAckLatency(reg prometheus.Registerer) *prometheus.HistogramVec {
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "herald_ack_latency_seconds",
		Help:    "From INTERACTION_CREATE received to the initial response answered, by outcome (routed, outdated, failed, unanswered).",
		Buckets: []float64{.005, .01, .02, .05, .1, .25, .5, 1, 2, 3},
	}, []string{"outcome"})
	if reg != nil {
		reg.MustRegister(h)
	}
	return h
}
