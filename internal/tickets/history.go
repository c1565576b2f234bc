package tickets

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/jackc/pgx/v5"

	"github.com/herald-bot/herald/internal/discord/rest"
	"github.com/herald-bot/herald/internal/discord/transport"
)

// transcriptHold is the longest one history read holds its worker for
// the rate limit: past five pages the history bucket (5 per 5 s) makes
// reads wait. A wait the attempt cannot afford snoozes the job instead
// (transport.RateLimitedError), and it goes on at the page it reached.
const transcriptHold = 4 * time.Minute

// readHistory reads every message of channel, oldest first, storing each
// page for ticketID as it is read, and goes on after the pages an earlier
// attempt stored. readable is false when the channel is gone; the pages
// read before are returned all the same.
func (d *deps) readHistory(ctx context.Context, ticketID int64, channel string) (msgs []*discordgo.Message, readable bool, err error) {
	msgs, err = d.storedHistory(ctx, ticketID)
	if err != nil {
		return nil, false, err
	}
	after := "0"
	if len(msgs) > 0 {
		after = msgs[len(msgs)-1].ID
	}
	for {
		page, err := d.discord.MessagesPage(holdFor(ctx), channel, after)
		if gone(err) {
			return msgs, false, nil
		}
		if err != nil {
			return nil, false, err
		}
		if len(page) == 0 {
			return msgs, true, nil
		}
		if err := d.storePage(ctx, ticketID, page); err != nil {
			return nil, false, err
		}
		msgs = append(msgs, page...)
		if len(page) < rest.MessagesPerPage {
			return msgs, true, nil
		}
		after = page[len(page)-1].ID
	}
}

// holdFor bounds a read's wait for the rate limit by transcriptHold and
// by half of what is left of the attempt, so the attempt ends in a snooze
// with its pages stored rather than at its timeout.
func holdFor(ctx context.Context) context.Context {
	hold := transcriptHold
	if dl, ok := ctx.Deadline(); ok {
		hold = min(hold, time.Until(dl)/2)
	}
	return transport.WithMaxWait(ctx, hold)
}

// storedHistory is the pages read for ticketID so far, oldest first.
func (d *deps) storedHistory(ctx context.Context, ticketID int64) ([]*discordgo.Message, error) {
	rows, err := d.db.Query(ctx, `SELECT messages FROM ticket_history_pages WHERE ticket_id = $1 ORDER BY last_id`, ticketID)
	if err != nil {
		return nil, fmt.Errorf("tickets: read stored history: %w", err)
	}
	var out []*discordgo.Message
	var b []byte
	_, err = pgx.ForEachRow(rows, []any{&b}, func() error {
		var page []*discordgo.Message
		if err := json.Unmarshal(b, &page); err != nil {
			return err
		}
		out = append(out, page...)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("tickets: read stored history: %w", err)
	}
	return out, nil
}

// storePage keeps one page (oldest first) of ticketID's history.
func (d *deps) storePage(ctx context.Context, ticketID int64, page []*discordgo.Message) error {
	last, err := strconv.ParseInt(page[len(page)-1].ID, 10, 64)
	if err != nil {
		return fmt.Errorf("tickets: message id %q: %w", page[len(page)-1].ID, err)
	}
	b, err := json.Marshal(page)
	if err != nil {
		return fmt.Errorf("tickets: store history page: %w", err)
	}
	_, err = d.db.Exec(ctx, `INSERT INTO ticket_history_pages (ticket_id, last_id, messages) VALUES ($1, $2, $3)
		ON CONFLICT DO NOTHING`, ticketID, last, b)
	if err != nil {
		return fmt.Errorf("tickets: store history page: %w", err)
	}
	return nil
}

// dropHistory removes ticketID's stored pages, in the transaction that
// stores its transcript.
func dropHistory(ctx context.Context, tx pgx.Tx, ticketID int64) error {
	_, err := tx.Exec(ctx, `DELETE FROM ticket_history_pages WHERE ticket_id = $1`, ticketID)
	return err
}
