package tickets

import (
	"context"

	"github.com/herald-bot/herald/internal/discord/rest"
)

// Discord archives a ticket's thread after a week without messages (its
// auto_archive_duration, which herald sets to 10080 minutes), sooner in a
// server near its active-thread limit. A message unarchives it, so posting
// and auto-close keep working; but its members and name cannot change
// while it is archived: Discord answers 50083. So a change is tried as
// is, and on 50083 the thread is unarchived and the change tried once
// more: a change to an active thread costs one request, as before, and
// one to an archived thread three, where reading the thread first would
// cost every change two.

// codeThreadArchived is Discord's answer to a change of an archived
// thread.
const codeThreadArchived = 50083

// onThread runs change on ticket t's thread and, when Discord archived
// the thread, unarchives it and runs change again.
func (d *deps) onThread(ctx context.Context, t *ticket, reason string, change func() error) error {
	err := change()
	if apiCode(err) != codeThreadArchived {
		return err
	}
	no := false
	if _, err := d.discord.ModifyChannel(ctx, *t.ChannelID, rest.ChannelEdit{Archived: &no}, reason); err != nil {
		return err
	}
	return change()
}
