package app

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/bwmarrin/discordgo"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/herald-bot/herald/commands"
	"github.com/herald-bot/herald/internal/config"
	"github.com/herald-bot/herald/internal/discord/rest"
	"github.com/herald-bot/herald/internal/feature"
	"github.com/herald-bot/herald/internal/i18n"
)

// RegisterCommands bulk-overwrites herald's application commands — the
// features' declarations, merged as New checks them — for one guild
// (instant; for testing) or globally (guildID ""), through the REST
// client like every Discord call. `herald run` registers on its own
// (syncCommands); this is the manual tool.
func RegisterCommands(ctx context.Context, cfg config.Config, log *slog.Logger, guildID string) error {
	cmds, err := declaredCommands()
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
	log.InfoContext(ctx, "registered application commands", "scope", scope(guildID), "commands", len(cmds))
	return nil
}

// declaredCommands are herald's features' commands, localized.
func declaredCommands() ([]*discordgo.ApplicationCommand, error) {
	catalog, err := i18n.Shipped()
	if err != nil {
		return nil, err
	}
	return feature.Commands(catalog, Features()...)
}

func scope(guildID string) string {
	if guildID == "" {
		return "global"
	}
	return "guild " + guildID
}

// registerLock is the Postgres advisory lock under which one herald
// process at a time compares and registers the commands, so processes
// starting together write once.
const registerLock int64 = 0x6865726c64636d64 // "herldcmd"

// syncCommands makes Discord's global commands herald's declared ones:
// it reads what Discord has and writes only when that differs, so a
// restart costs one read and no write.
func syncCommands(ctx context.Context, db *pgxpool.Pool, discord *rest.Client, declared []*discordgo.ApplicationCommand, log *slog.Logger) error {
	conn, err := db.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", registerLock); err != nil {
		return fmt.Errorf("app: lock command registration: %w", err)
	}
	// Unlocked on a context of its own: the lock is the connection's and
	// must not go back to the pool held.
	defer conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", registerLock)
	registered, err := discord.Commands(ctx, "")
	if err != nil {
		return fmt.Errorf("app: read the registered commands: %w", err)
	}
	if commands.Same(declared, registered) {
		log.InfoContext(ctx, "application commands up to date", "commands", len(declared))
		return nil
	}
	if _, err := discord.OverwriteCommands(ctx, "", declared); err != nil {
		return fmt.Errorf("app: register commands: %w", err)
	}
	log.InfoContext(ctx, "registered application commands", "scope", scope(""), "commands", len(declared), "were", len(registered))
	return nil
}
