package bench

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/discord/sim"
)

// Unscaled limit of the transcript: the simulator's message-history
// bucket (Discord's observed 5 per 5 s per channel), 100 messages a page.
const (
	historyLimit  = 5
	historyWindow = 5 * time.Second
	historyPage   = 100
)

// transcript has the ticket in thread hold n member messages, closes it
// as staff and measures from the close to the transcript's upload in the
// log channel, against the least the history bucket allows for reading
// every page.
func (res *TicketsResult) transcript(w *world, g sim.FixtureResult, thread, opener string, n int) error {
	for i := range n {
		b, _ := json.Marshal(sim.MemberMessage{UserID: opener, Content: "message " + strconv.Itoa(i)})
		r, err := w.http.Post(w.url+"/_sim/channels/"+thread+"/messages", "application/json", bytes.NewReader(b))
		if err != nil {
			return err
		}
		r.Body.Close()
		if r.StatusCode >= 300 {
			return fmt.Errorf("posting the ticket's history: %d", r.StatusCode)
		}
	}
	before := w.sim.CountMessages(g.Channels[2].ID, "Transcript of ticket #")
	c, err := res.closes(w, g)
	if err != nil {
		return err
	}
	if err := c.run(thread); err != nil {
		return err
	}
	pages := (n+1)/historyPage + 1 // the welcome too, and a last short page
	window := time.Duration(float64(historyWindow) * res.TimeScale)
	least := minimum(pages, historyLimit, window)
	var uploaded time.Time
	var runErr error
	err = until(3*least+time.Minute, "the long ticket's transcript", func() bool {
		if runErr = c.again(nil); runErr != nil {
			return true
		}
		if w.sim.CountMessages(g.Channels[2].ID, "Transcript of ticket #") <= before {
			return false
		}
		for _, m := range w.sim.ChannelMessages(g.Channels[2].ID) {
			if t, err := discordgo.SnowflakeTimestamp(m.ID); err == nil && t.After(uploaded) {
				uploaded = t
			}
		}
		return true
	})
	if err = cmp.Or(runErr, err); err != nil {
		return err
	}
	// From the close herald took: a refused one made no transcript.
	at, ok := c.taken[thread]
	if !ok {
		at = c.pending[thread].at
	}
	res.TranscriptMessages = n
	res.TranscriptMS = ms(uploaded.Sub(at))
	res.TranscriptMinimumMS = ms(least)
	if least > 0 {
		res.TranscriptRatio = res.TranscriptMS / res.TranscriptMinimumMS
	}
	for _, r := range w.sim.Requests() {
		if r.Time.After(at) && r.Method == http.MethodGet && r.Route == "/channels/{channel_id}/messages" {
			res.TranscriptPages++
		}
	}
	return nil
}
