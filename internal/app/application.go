package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/herald-bot/herald/internal/adminhttp"
	"github.com/herald-bot/herald/internal/config"
	"github.com/herald-bot/herald/internal/discord/intents"
	"github.com/herald-bot/herald/internal/discord/rest"
	"github.com/herald-bot/herald/internal/discord/transport"
	"github.com/herald-bot/herald/internal/feature"
	"github.com/herald-bot/herald/internal/gateway"
	"github.com/herald-bot/herald/internal/i18n"
)

// FatalError is a failure no restart can mend — Discord refused the
// token, the application is not the configured one — so `herald run`
// exits once with ExitFatal, which the shipped systemd unit and
// Kubernetes manifest do not restart in a loop (a loop would spend one of
// the day's gateway identifies per restart and count invalid requests).
type FatalError struct {
	Err error
	// Fix says what the admin does about it.
	Fix string
}

func (e *FatalError) Error() string { return e.Err.Error() + ": " + e.Fix }
func (e *FatalError) Unwrap() error { return e.Err }

// ExitFatal is the exit status of a FatalError: EX_CONFIG of sysexits.h.
const ExitFatal = 78

// readApplication asks Discord which application the token belongs to:
// its id, its bot user's id (older applications' differ) and the flags
// that say which privileged intents its owner switched on. DISCORD_APP_ID,
// when set, must name the same application.
func readApplication(ctx context.Context, cfg config.Config, log *slog.Logger) (rest.Application, error) {
	_, discord := newDiscord(cfg, log, nil, cfg.DiscordAppID)
	app, err := discord.Application(ctx)
	var api *transport.APIError
	switch {
	case errors.Is(err, transport.ErrUnauthorized) || errors.As(err, &api) && api.Class() == transport.Unauthorized:
		return app, &FatalError{Err: errors.New("app: Discord rejected DISCORD_TOKEN (401 Unauthorized)"),
			Fix: "copy the bot's token from the Developer Portal (your application › Bot › Reset Token) into DISCORD_TOKEN, then start herald again"}
	case err != nil:
		return app, fmt.Errorf("app: read the application from Discord: %w", err)
	case cfg.DiscordAppID != "" && cfg.DiscordAppID != app.ID:
		return app, &FatalError{Err: fmt.Errorf("DISCORD_APP_ID is %s, but DISCORD_TOKEN belongs to application %s (%q)", cfg.DiscordAppID, app.ID, app.Name),
			Fix: "unset DISCORD_APP_ID (herald reads it from Discord) or set it to " + app.ID}
	}
	return app, nil
}

// Missing lists what herald's features cannot do on application app:
// every need whose privileged intent the owner has not switched on.
func Missing(app rest.Application, fs ...feature.Feature) []feature.Need {
	var out []feature.Need
	for _, f := range fs {
		for _, n := range f.Needs {
			if !n.Intent.EnabledBy(app.Flags) {
				out = append(out, n)
			}
		}
	}
	return out
}

// warnMissing logs one warning per privileged intent the application
// lacks, naming what it turns off and where the owner switches it on.
func warnMissing(log *slog.Logger, c *i18n.Catalog, missing []feature.Need) {
	for _, p := range intents.All {
		var off []string
		for _, n := range missing {
			if n.Intent == p {
				off = append(off, c.For("en-US", "").T(n.Without, nil))
			}
		}
		if len(off) > 0 {
			log.Warn("the application lacks a privileged intent; herald runs without it",
				"intent", p.Name, "turns_off", strings.Join(off, "; "),
				"fix", "Developer Portal › your application › Bot › Privileged Gateway Intents › "+p.Name+", then restart herald")
		}
	}
}

// Hold serves the admin server's health endpoints for a herald that met
// fatal — /healthz alive, /readyz 503 with the reason and the fix — until
// ctx ends, so an orchestrator that restarts every exited container
// (Kubernetes, Compose) keeps it instead of restarting it in a loop.
func Hold(ctx context.Context, cfg config.Config, log *slog.Logger, fatal *FatalError) error {
	ln, err := net.Listen("tcp", cfg.HTTPAddr)
	if err != nil {
		return fmt.Errorf("app: admin HTTP: %w", err)
	}
	srv := adminhttp.Server(adminhttp.Handler(func(context.Context) ([]string, error) { return nil, fatal },
		prometheus.NewRegistry(), log, adminhttp.Operator{}))
	go srv.Serve(ln)
	log.WarnContext(ctx, "herald waits, unready, until it is stopped (HERALD_ON_FATAL=wait)", "admin", ln.Addr().String())
	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.Background(), stopGrace)
	defer cancel()
	return srv.Shutdown(sctx)
}

// gatewayFatal turns a fatal gateway close (4004, 4010–4014) into a
// FatalError: reconnecting cannot help, and would spend identifies.
func gatewayFatal(err error) error {
	var fe *gateway.FatalCloseError
	if errors.As(err, &fe) {
		return &FatalError{Err: fe, Fix: fe.Fix}
	}
	return err
}
