// Package webhookproxy is herald's webhook proxy: one durable egress point
// for every service's Discord notifications (seed 004). Services post to
// herald exactly as they post to Discord's execute-webhook route, only
// to HERALD_PROXY_ADDR; each request is checked as Discord checks it,
// stored with its delivery job in one transaction before it is answered,
// and delivered in order per webhook and thread through herald's REST
// engine, so a traffic peak delays notifications but never loses them.
package webhookproxy

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/discord/intents"
	"github.com/herald-bot/herald/internal/feature"
	"github.com/herald-bot/herald/internal/followup"
	"github.com/herald-bot/herald/internal/interaction"
	"github.com/herald-bot/herald/internal/webhookproxy/execute"
	"github.com/herald-bot/herald/internal/work"
)

// Name is the feature's name, and its service's (app.ServiceAddr).
const Name = "webhookproxy"

// Feature declares the webhook proxy. Its delivery jobs and /herald proxy
// work whether or not this herald serves the ingress, so deliveries
// accepted before HERALD_PROXY_ADDR was unset still go out.
func Feature() feature.Feature {
	return feature.Feature{Name: Name, Commands: declare, Settings: vars(), Build: build,
		Needs: []feature.Need{{Intent: intents.MessageContent, Without: "webhookproxy.needs.read_back"}}}
}

func build(k feature.Kit) error {
	set, err := readSettings(k.Config)
	if err != nil {
		return err
	}
	hash := newHasher(k.DB)
	// One verifier and budget for the ingress and the drains: a token is
	// asked about once, whichever meets it first.
	invalid := newBudget(set.invalidPerKey, set.invalidTotal, time.Now)
	tokens := newVerifier(k.DB, k.Discord, hash, invalid, time.Now)
	m := newMetrics(k.Metrics, k.DB, set.keys, invalid)
	w := newWaiters()
	k.Routes.Route("/herald", func(r *interaction.Mux) {
		r.Use(interaction.GuildOnly, interaction.RequirePermission(discordgo.PermissionManageGuild), interaction.Cooldown(cooldown))
		r.Command("/proxy", followup.Later[reportView])
	})
	followup.RegisterView[reportView](k.Jobs, k.Followups, k.Catalog, report{db: k.DB, on: set.addr != ""}.text)
	work.Register(k.Jobs, &drainer{db: k.DB, discord: k.Discord, tokens: tokens, bodies: newBytePool(set.memory, set.memory/2), metrics: m, waiters: w, log: k.Log,
		readBack: intents.MessageContent.EnabledBy(k.Application.Flags)})
	k.Events.On(forgetChannel(k.DB, k.Log))
	work.Register(k.Jobs, &pruneWorker{db: k.DB, retention: set.retention, deadRetention: set.deadRetention})
	k.Jobs.Periodic(pruneJob())
	k.Reports.Add("webhookproxy", guildReport(k.DB))
	if set.addr == "" {
		return nil
	}
	if !set.allow.all && len(set.allow.ids) == 0 {
		k.Log.Warn("HERALD_PROXY_ALLOW names no webhook: the proxy refuses every request")
	}
	ln, err := k.Services.Listen(Name, set.addr)
	if err != nil {
		return err
	}
	bodies := newBytePool(set.memory, set.memory/2)
	m.watchBodies(bodies)
	p := &proxy{set: set, db: k.DB, accept: newAcceptor(k.DB, k.Insert, m.batch, set.quotas), tokens: tokens, bodies: bodies, rates: newRates(set.keyRate, set.keyBytesRate, execute.MaxBody(set.maxUpload)), hasher: hash,
		waiters: w, metrics: m, log: k.Log, stopping: make(chan struct{})}
	k.Services.Run(Name, func(ctx context.Context) error { return p.serve(ctx, ln) })
	return nil
}

// stopGrace bounds how long a stop waits for requests in flight: those
// being stored finish, callers holding ?wait=true get 202.
const stopGrace = 5 * time.Second

// serve answers requests until ctx ends, then stops taking new ones,
// lets those in flight be stored and answered, and stops the writers.
func (p *proxy) serve(ctx context.Context, ln net.Listener) error {
	actx, stopAccepting := context.WithCancel(context.WithoutCancel(ctx))
	written := make(chan struct{})
	go func() { p.accept.run(actx); close(written) }()
	// Headers within 5 s and 16 KiB; the body within HERALD_PROXY_BODY_TIMEOUT
	// (set per request once the token is verified); ReadTimeout only
	// backs that up.
	srv := &http.Server{Handler: p.handler(), ReadHeaderTimeout: 5 * time.Second, MaxHeaderBytes: 16 << 10,
		ReadTimeout: p.set.bodyTimeout + acceptDeadline + 5*time.Second, IdleTimeout: 2 * time.Minute}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	var err error
	select {
	case <-ctx.Done():
	case err = <-served:
	}
	close(p.stopping)
	sctx, cancel := context.WithTimeout(context.Background(), stopGrace)
	defer cancel()
	err = errors.Join(err, srv.Shutdown(sctx))
	stopAccepting()
	<-written
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}
