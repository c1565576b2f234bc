package main

import (
	"context"
	"fmt"

	"github.com/herald-bot/herald/internal/app"
	"github.com/herald-bot/herald/internal/config"
)

// demoToken is the bot token the demo's simulator accepts; it is not a
// Discord token.
const demoToken = "herald-demo-token"

func cmdDemo(ctx context.Context, args []string, e env) int {
	fs := newFlagSet("demo", "Starts the Discord simulator with the default guild and runs herald against it, migrating the database first. Other settings come from the environment as for `herald run`.")
	var f simFlags
	f.register(fs, "127.0.0.1:0")
	if ok, code := parseFlags(fs, args, e); !ok {
		return code
	}
	f.token = demoToken
	if err := f.validate(); err != nil {
		fmt.Fprintf(e.stderr, "herald demo: %v\n", err)
		fs.Usage()
		return exitUsage
	}
	log := simLogger(e)
	// The simulator outlives herald, so herald's shutdown still reaches it.
	simCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	defer stop()
	s, err := startSim(simCtx, f, log.With("component", "sim"))
	if err != nil {
		log.Error("simulator cannot start", "err", err)
		return exitFail
	}
	// The simulator's settings win over the environment's Discord ones.
	demoEnv := map[string]string{
		"DISCORD_TOKEN":       demoToken,
		"DISCORD_APP_ID":      s.BotUserID(),
		"HERALD_DISCORD_API":  s.url + "/api/v10",
		"HERALD_AUTO_MIGRATE": "true",
	}
	cfg, log, ok := loadConfig(e, func(lookup config.Lookup) (config.Config, error) {
		return app.LoadConfig(func(k string) (string, bool) {
			if v, ok := demoEnv[k]; ok {
				return v, true
			}
			return lookup(k)
		})
	})
	if !ok {
		return exitFail
	}
	log.Info("demo: Discord simulator running", "url", s.url, "control", s.url+"/_sim/")
	a, err := app.New(ctx, cfg, log)
	if err != nil {
		log.Error("herald cannot start", "err", err)
		return exitFail
	}
	code := exitOK
	if err := a.Run(ctx); err != nil {
		log.Error("herald stopped with an error", "err", err)
		code = exitFail
	}
	stop()
	if err := <-s.done; err != nil {
		log.Error("simulator stopped with an error", "err", err)
		code = exitFail
	}
	return code
}
