package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/herald-bot/herald/internal/config"
	"github.com/herald-bot/herald/internal/feature"
	"github.com/herald-bot/herald/internal/interaction"
)

// interactionsAddrVar turns on herald's second ingress: Discord's
// Interactions Endpoint URL, beside the gateway.
var interactionsAddrVar = config.Var[string]{
	Setting: config.Setting{Key: "HERALD_INTERACTIONS_ADDR", RunOnly: true,
		Help: "listen address of the Interactions Endpoint URL (e.g. :8082), served behind HTTPS at the URL saved in the Developer Portal; unset: interactions come over the gateway only"},
	Parse: func(v string) (string, error) {
		if v == "" {
			return "", nil
		}
		if _, _, err := net.SplitHostPort(v); err != nil {
			return "", fmt.Errorf("want host:port: %w", err)
		}
		return v, nil
	},
}

// Settings lists the settings `herald run` reads beyond herald's core
// ones: the app's own and those of its features, extra ones included.
func Settings(extra ...feature.Feature) []config.Declared {
	return append(feature.Settings(append(Features(), extra...)...), interactionsAddrVar)
}

// Timeouts of the Interactions Endpoint URL's server: Discord waits 3 s
// for an answer, so a request that takes longer to arrive or to be
// answered holds a connection for nothing.
const (
	interactionsReadTimeout  = 3 * time.Second
	interactionsWriteTimeout = 5 * time.Second
	interactionsIdleTimeout  = time.Minute
	interactionsMaxHeader    = 16 << 10
)

// listenInteractions binds the Interactions Endpoint URL's port when
// HERALD_INTERACTIONS_ADDR is set.
func (a *App) listenInteractions() error {
	addr := interactionsAddrVar.Get(a.cfg)
	if addr == "" {
		return nil
	}
	e, err := interaction.NewEndpoint(a.fastPath, a.application.VerifyKey, a.metrics, nil)
	if err != nil {
		return err
	}
	if a.interactionsLn, err = net.Listen("tcp", addr); err != nil {
		return fmt.Errorf("app: interactions endpoint: %w", err)
	}
	a.interactions = &http.Server{Handler: e, ReadHeaderTimeout: interactionsReadTimeout, ReadTimeout: interactionsReadTimeout,
		WriteTimeout: interactionsWriteTimeout, IdleTimeout: interactionsIdleTimeout, MaxHeaderBytes: interactionsMaxHeader}
	return nil
}

// InteractionsAddr is the address the Interactions Endpoint URL is
// served on, "" when HERALD_INTERACTIONS_ADDR is unset.
func (a *App) InteractionsAddr() string {
	if a.interactionsLn == nil {
		return ""
	}
	return a.interactionsLn.Addr().String()
}

// serveInteractions serves the endpoint until stopInteractions.
func (a *App) serveInteractions(errs chan<- error) {
	if a.interactions == nil {
		return
	}
	go func() {
		if err := a.interactions.Serve(a.interactionsLn); !errors.Is(err, http.ErrServerClosed) {
			errs <- err
		}
	}()
}

// stopInteractions takes no new interactions and lets those in flight be
// answered, so their held work is released before the dispatcher stops.
func (a *App) stopInteractions() error {
	if a.interactions == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), stopGrace)
	defer cancel()
	return a.interactions.Shutdown(ctx)
}
