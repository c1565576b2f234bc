package app

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/herald-bot/herald/internal/config"
	"github.com/herald-bot/herald/internal/feature"
	"github.com/herald-bot/herald/internal/i18n"
	"github.com/herald-bot/herald/locales"
)

// RegisterCommands bulk-overwrites herald's application commands — the
// features' declarations, merged as New checks them — for one guild
// (instant; for testing) or globally (guildID ""), through the REST
// client like every Discord call.
func RegisterCommands(ctx context.Context, cfg config.Config, log *slog.Logger, guildID string) error {
	catalog, err := i18n.New(locales.FS)
	if err != nil {
		return err
	}
	cmds, err := feature.Commands(catalog, Features()...)
	if err != nil {
		return err
	}
	app, err := readApplication(ctx, cfg, log)
	if err != nil {
		return err
	}
	_, discord := newDiscord(cfg, log, nil, app.ID)
	if _, err := discord.OverwriteCommands(ctx, guildID, cmds); err != nil {
		return fmt.Errorf("app: register commands: %w", err)
	}
	scope := "global"
	if guildID != "" {
		scope = "guild " + guildID
	}
	log.InfoContext(ctx, "registered application commands", "scope", scope, "commands", len(cmds))
	return nil
}
