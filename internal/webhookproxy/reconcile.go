package webhookproxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/herald-bot/herald/internal/webhookproxy/execute"
)

// reconcileScan bounds how many of the channel's newer messages one
// reconciliation reads.
const reconcileScan = 500

// reconcileSlack is how far before the attempt the search starts, for
// clocks that differ between herald and Discord.
const reconcileSlack = 5 * time.Second

// errUnknowable means the outcome cannot be read back.
var errUnknowable = errors.New("webhookproxy: the outcome cannot be read back")

// reconcile looks for the message an attempt whose answer was lost may
// have created: Discord's execute takes no nonce, so the bot reads the
// target channel for a message of this webhook, created after the
// attempt began, with the same content, embeds and attachments. Earlier
// deliveries of the target finished before that attempt, so they cannot
// match. Without the Message Content intent Discord shows the bot no
// webhook's content, embeds or attachments: nothing can be matched.
func (w *drainer) reconcile(ctx context.Context, d pending) (json.RawMessage, bool, error) {
	if !w.readBack || d.variant != "" || d.attemptedAt.IsZero() {
		return nil, false, errUnknowable
	}
	raw, files, apiErr := execute.Message(d.contentType, d.body)
	if apiErr != nil {
		return nil, false, errUnknowable
	}
	var want execute.Payload
	var content, thread string
	var embeds []json.RawMessage
	if raw != nil && json.Unmarshal(raw, &want) != nil ||
		errors.Join(want.Field("content", &content), want.Field("embeds", &embeds), want.Field("thread_name", &thread)) != nil || thread != "" {
		// A new forum post lands in a thread nobody knows yet.
		return nil, false, errUnknowable
	}
	channel, err := w.channel(ctx, d)
	if err != nil {
		return nil, false, err
	}
	after := snowflakeAt(d.attemptedAt.Add(-reconcileSlack))
	n := 0
	for m, err := range w.discord.MessagesAfter(ctx, channel, after) {
		if err != nil {
			return nil, false, err
		}
		if matches(m, d.webhookID, content, len(embeds), files.Count) {
			b, err := json.Marshal(m)
			return b, err == nil, err
		}
		if n++; n >= reconcileScan {
			break
		}
	}
	return nil, false, nil
}

// channel is where d's attempt posted: its thread, or the webhook's
// channel as stored — kept until WEBHOOKS_UPDATE says a webhook of that
// channel changed (forgetChannel) — or else as Discord says now, stored
// for the next time.
func (w *drainer) channel(ctx context.Context, d pending) (string, error) {
	switch {
	case d.threadID != "":
		return d.threadID, nil
	case d.channel != "":
		return d.channel, nil
	}
	hook, err := w.discord.WebhookWithToken(ctx, d.webhookID, d.token)
	if err != nil {
		return "", err
	}
	return hook.ChannelID, recordWebhook(ctx, w.db, hook)
}

// recordWebhook stores where hook posts, as Discord just said: its guild
// and its channel, current until WEBHOOKS_UPDATE says otherwise.
func recordWebhook(ctx context.Context, db *pgxpool.Pool, hook *discordgo.Webhook) error {
	_, err := db.Exec(ctx, `INSERT INTO webhookproxy_webhooks (webhook_id, guild_id, channel_id, channel_current) VALUES ($1, $2, $3, true)
		ON CONFLICT (webhook_id) DO UPDATE SET guild_id = EXCLUDED.guild_id, channel_id = EXCLUDED.channel_id, channel_current = true`,
		hook.ID, hook.GuildID, hook.ChannelID)
	if err != nil {
		return fmt.Errorf("webhookproxy: record webhook: %w", err)
	}
	return nil
}

// forgetChannel marks the stored channel of the webhooks in a channel
// whose webhooks changed (created, moved, renamed or deleted: Discord's
// WEBHOOKS_UPDATE names the channel, not the webhook), so reconciling
// asks Discord where they post now.
func forgetChannel(db *pgxpool.Pool, log *slog.Logger) func(*discordgo.Session, *discordgo.WebhooksUpdate) {
	return func(_ *discordgo.Session, e *discordgo.WebhooksUpdate) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := db.Exec(ctx, `UPDATE webhookproxy_webhooks SET channel_current = false WHERE guild_id = $1 AND channel_id = $2`,
			e.GuildID, e.ChannelID); err != nil {
			log.Warn("webhookproxy: forgetting where a changed channel's webhooks post failed; a moved webhook may be reconciled in its old channel",
				"channel_id", e.ChannelID, "err", err)
		}
	}
}

func matches(m *discordgo.Message, webhookID, content string, embeds, files int) bool {
	return m.WebhookID == webhookID && m.Content == content && len(m.Embeds) == embeds && len(m.Attachments) == files
}

// discordEpoch is the first millisecond of 2015, where snowflakes begin.
const discordEpoch = 1420070400000

// snowflakeAt is the smallest snowflake of a moment, for "after" queries.
func snowflakeAt(t time.Time) string {
	ms := max(t.UnixMilli()-discordEpoch, 0)
	return strconv.FormatInt(ms<<22, 10)
}
