package status

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/herald-bot/herald/internal/config"
	"github.com/herald-bot/herald/internal/discord/rest"
	"github.com/herald-bot/herald/internal/discord/transport"
	"github.com/herald-bot/herald/internal/i18n"
	"github.com/herald-bot/herald/internal/interaction"
	"github.com/herald-bot/herald/internal/outbox"
	"github.com/herald-bot/herald/internal/work"
)

// boardInterval is the least time between two edits of a board.
var boardInterval = config.Var[time.Duration]{
	Setting: config.Setting{Key: "HERALD_BOARD_INTERVAL", Default: "30s",
		Help: "how often a /herald board message is brought up to date; it is edited only when the summary changed"},
	Parse: func(v string) (time.Duration, error) {
		d, err := time.ParseDuration(v)
		if err != nil || d < time.Second || d > time.Hour {
			return 0, fmt.Errorf("must be a duration from 1s to 1h, got %q", v)
		}
		return d, nil
	},
}

// boardArgs is one look at a guild's board: it edits the message when the
// summary changed and schedules the next look. There is at most one
// waiting per guild (unique by args), so a board is edited at most once
// per interval however much changes.
type boardArgs struct {
	GuildID string `json:"guild_id"`
}

func (boardArgs) Kind() string { return "status_board" }

// nextLook is the options of a board's next look, an interval from now:
// one per guild and interval-long period of River's (unique by args and
// ScheduledAt's period), so the look running now — in an earlier period —
// never blocks its successor, and two chains of looks (the command's
// first look and the running one) merge at the first period they share.
func nextLook(now time.Time, interval time.Duration) *river.InsertOpts {
	return &river.InsertOpts{Queue: string(work.Sync), ScheduledAt: now.Add(interval),
		UniqueOpts: river.UniqueOpts{ByArgs: true, ByPeriod: interval}}
}

// board is /herald board channel: it records the board's channel (moving
// an existing board there) and has its first look taken at once.
func board(ctx context.Context, in *interaction.Interaction) (*discordgo.InteractionResponse, error) {
	channel := in.Options().String("channel")
	userLocale, guildLocale := in.Locales()
	locale := guildLocale
	if locale == "" {
		locale = userLocale
	}
	tx, err := in.Tx(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO status_boards (guild_id, channel_id, locale) VALUES ($1, $2, $3)
		ON CONFLICT (guild_id) DO UPDATE SET locale = EXCLUDED.locale, channel_id = EXCLUDED.channel_id, message_id = NULL, shown_hash = NULL,
			placement = status_boards.placement + 1,
			stale_channel = COALESCE(status_boards.stale_channel, status_boards.channel_id),
			stale_message = COALESCE(status_boards.stale_message, status_boards.message_id)
		WHERE status_boards.channel_id <> EXCLUDED.channel_id OR status_boards.message_id IS NULL`, in.GuildID, channel, locale); err != nil {
		return nil, fmt.Errorf("status: board: %w", err)
	}
	// Not unique here (the ledger makes the fast path's work unique): a
	// look already scheduled and this one merge, as each inserts its
	// successor only when none waits.
	if err := in.Enqueue(ctx, outbox.IntentSync, river.InsertManyParams{Args: boardArgs{GuildID: in.GuildID},
		InsertOpts: &river.InsertOpts{Queue: string(work.Sync)}}); err != nil {
		return nil, err
	}
	return interaction.Ephemeral(in.Localizer.T("status.board_set", map[string]any{"Channel": "<#" + channel + ">"})), nil
}

type boardWorker struct {
	river.WorkerDefaults[boardArgs]
	summary
	discord  *rest.Client
	catalog  *i18n.Catalog
	interval time.Duration
}

type boardRow struct {
	id, placement        int64
	channelID, locale    string
	messageID            *string
	shown                []byte
	staleChannel, staleM *string
}

// Work renders the summary in the guild's language and shows it: a new
// message (with a nonce, so a retried create makes one), an edit when it
// changed, nothing when it did not. A board whose message or channel was
// deleted stops: deleting the message is how an admin takes it down.
func (w *boardWorker) Work(ctx context.Context, j *river.Job[boardArgs]) error {
	g := j.Args.GuildID
	var b boardRow
	err := w.db.QueryRow(ctx, `SELECT id, placement, channel_id, locale, message_id, shown_hash, stale_channel, stale_message
		FROM status_boards WHERE guild_id = $1`, g).Scan(&b.id, &b.placement, &b.channelID, &b.locale, &b.messageID, &b.shown, &b.staleChannel, &b.staleM)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("status: board: %w", err)
	}
	if b.staleChannel != nil && b.staleM != nil {
		if err := w.discord.DeleteMessage(ctx, *b.staleChannel, *b.staleM, "status board moved"); err != nil && !gone(err) {
			return err
		}
		if _, err := w.db.Exec(ctx, `UPDATE status_boards SET stale_channel = NULL, stale_message = NULL WHERE id = $1`, b.id); err != nil {
			return fmt.Errorf("status: board: %w", err)
		}
	}
	loc := w.catalog.For("", b.locale)
	text, err := w.render(ctx, g, loc, loc.T("status.board_title", nil), time.Now(), false)
	if err != nil {
		return err
	}
	sum := sha256.Sum256([]byte(text))
	switch {
	case b.messageID == nil:
		msg, err := w.discord.CreateMessage(ctx, b.channelID, rest.NewMessage{Content: text,
			AllowedMentions: &discordgo.MessageAllowedMentions{}, Nonce: fmt.Sprintf("hb%d.%d", b.id, b.placement)})
		if gone(err) {
			return w.stop(ctx, b)
		}
		if err != nil {
			return err
		}
		// Only while the board is still this placement: a move meanwhile
		// left this message to nobody, so it goes.
		tag, err := w.db.Exec(ctx, `UPDATE status_boards SET message_id = $2, shown_hash = $3 WHERE id = $1 AND placement = $4`,
			b.id, msg.ID, sum[:], b.placement)
		if err != nil {
			return fmt.Errorf("status: board: %w", err)
		}
		if tag.RowsAffected() == 0 {
			return w.discord.DeleteMessage(ctx, b.channelID, msg.ID, "status board moved")
		}
	case string(b.shown) != string(sum[:]):
		_, err := w.discord.EditMessage(ctx, b.channelID, *b.messageID, rest.MessageEdit{Content: &text})
		if gone(err) {
			return w.stop(ctx, b)
		}
		if err != nil {
			return err
		}
		if _, err := w.db.Exec(ctx, `UPDATE status_boards SET shown_hash = $2 WHERE id = $1 AND placement = $3`, b.id, sum[:], b.placement); err != nil {
			return fmt.Errorf("status: board: %w", err)
		}
	}
	client := river.ClientFromContext[pgx.Tx](ctx)
	if _, err := client.Insert(ctx, boardArgs{GuildID: g}, work.ForGuild(nextLook(time.Now(), w.interval), g)); err != nil {
		return fmt.Errorf("status: next board look: %w", err)
	}
	return nil
}

// stop takes down a board whose message or channel is gone.
func (w *boardWorker) stop(ctx context.Context, b boardRow) error {
	_, err := w.db.Exec(ctx, `DELETE FROM status_boards WHERE id = $1 AND placement = $2`, b.id, b.placement)
	return err
}

// gone reports whether Discord said the board's message or channel no
// longer exists.
func gone(err error) bool {
	var api *transport.APIError
	return errors.As(err, &api) && api.Class() == transport.NotFound
}
