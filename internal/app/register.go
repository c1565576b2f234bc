package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"

	"github.com/herald-bot/herald/commands"
	"github.com/herald-bot/herald/internal/config"
	"github.com/herald-bot/herald/internal/discord/transport"
	"github.com/herald-bot/herald/internal/i18n"
	"github.com/herald-bot/herald/locales"
)

// RegisterCommands bulk-overwrites herald's application commands, for one
// guild (instant; for testing) or globally (guildID ""), through the
// transport like every Discord call.
func RegisterCommands(ctx context.Context, cfg config.Config, log *slog.Logger, guildID string) error {
	catalog, err := i18n.New(locales.FS)
	if err != nil {
		return err
	}
	defs := commands.All(catalog)
	body, err := json.Marshal(defs)
	if err != nil {
		return err
	}
	path := "/applications/" + cfg.DiscordAppID + "/commands"
	if guildID != "" {
		path = "/applications/" + cfg.DiscordAppID + "/guilds/" + guildID + "/commands"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, cfg.DiscordAPI+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bot "+cfg.DiscordToken.Reveal())
	req.Header.Set("Content-Type", "application/json")
	e := transport.New(transport.Config{ApplicationID: cfg.DiscordAppID, GlobalLimit: cfg.GlobalLimit, Logger: log})
	resp, err := e.Do(req)
	if err != nil {
		return fmt.Errorf("app: register commands: %w", err)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	scope := "global"
	if guildID != "" {
		scope = "guild " + guildID
	}
	log.InfoContext(ctx, "registered application commands", "scope", scope, "commands", len(defs))
	return nil
}
