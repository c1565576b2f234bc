package webhookproxy

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/bwmarrin/discordgo"

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
	channel := d.threadID
	if channel == "" {
		hook, err := w.discord.WebhookWithToken(ctx, d.webhookID, d.token)
		if err != nil {
			return nil, false, err
		}
		channel = hook.ChannelID
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
