package rolemenu

import (
	"context"
	"time"

	"github.com/bwmarrin/discordgo"
)

// eventTimeout bounds the database write an event handler makes.
const eventTimeout = 5 * time.Second

// The gateway says at most once what changed; the publish job finds the
// same when it next touches the menu (10008, 10003, a role gone), so an
// event missed during a reconnect is caught then.

// onMessageDelete marks a menu whose message was deleted: it is not
// recreated until an admin republishes.
func (d *deps) onMessageDelete(_ *discordgo.Session, e *discordgo.MessageDelete) {
	d.markGone(`message_id = $1`, e.ID, "message")
}

// onChannelDelete marks the menus of a deleted channel.
func (d *deps) onChannelDelete(_ *discordgo.Session, e *discordgo.ChannelDelete) {
	d.markGone(`channel_id = $1`, e.ID, "channel")
}

func (d *deps) markGone(where, id, detail string) {
	ctx, cancel := context.WithTimeout(context.Background(), eventTimeout)
	defer cancel()
	if _, err := d.db.Exec(ctx, `UPDATE rolemenus SET state = 'target_missing', state_detail = $2 WHERE state = 'active' AND `+where, id, detail); err != nil {
		d.log.Warn("recording a deleted menu message failed; the next publish finds it", "err", err)
	}
}
