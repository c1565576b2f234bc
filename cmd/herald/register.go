package main

import (
	"context"
	"fmt"
	"strconv"

	"github.com/herald-bot/herald/internal/app"
	"github.com/herald-bot/herald/internal/config"
)

func cmdRegisterCommands(ctx context.Context, args []string, e env) int {
	fs := newFlagSet("register-commands", "Bulk-overwrites herald's application commands with the definitions in this binary: globally, or for one guild with --guild (applies at once; for testing).")
	guild := fs.String("guild", "", "guild id to register the commands in instead of globally")
	if ok, code := parseFlags(fs, args, e); !ok {
		return code
	}
	if *guild != "" {
		if _, err := strconv.ParseUint(*guild, 10, 64); err != nil {
			fmt.Fprintf(e.stderr, "herald register-commands: --guild must be a guild id (a number), got %q\n", *guild)
			return exitUsage
		}
	}
	cfg, log, ok := loadConfig(e, func(l config.Lookup) (config.Config, error) { return app.LoadConfig(l) })
	if !ok {
		return exitFail
	}
	if err := app.RegisterCommands(ctx, cfg, log, *guild); err != nil {
		log.Error("registering commands failed", "err", err)
		return exitFail
	}
	return exitOK
}
