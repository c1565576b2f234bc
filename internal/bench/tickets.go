package bench

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/i18n"
)

// TicketsResult is what `herald bench tickets --json` prints. Times are
// wall-clock milliseconds on the time-scaled simulator; divide by
// TimeScale for Discord's unscaled time. Ratios are the same either way.
type TicketsResult struct {
	TimeScale float64 `json:"time_scale"`
	Members   int     `json:"members"`
	// Clicks counts the panel clicks: every member clicks twice at once.
	Clicks    int `json:"clicks"`
	ClickRate int `json:"click_rate"`
	// Acked counts clicks answered within Discord's (scaled) 3 seconds.
	Acked  int `json:"acked"`
	Opened int `json:"opened"`
	Closed int `json:"closed"`
	// Duplicates counts second threads, welcomes or tickets for one
	// member: it must be 0.
	Duplicates int `json:"duplicates"`
	// Open-click-to-thread-created latency: from a member's first click
	// to the creation time of their ticket's thread (its snowflake).
	OpenP50MS float64 `json:"open_p50_ms"`
	OpenP99MS float64 `json:"open_p99_ms"`
	// The same for the earliest the thread-create bucket of the panel's
	// channel allows: every create sent the moment its click arrives or
	// the bucket has room, in click order.
	MinimumP50MS float64 `json:"minimum_p50_ms"`
	MinimumP99MS float64 `json:"minimum_p99_ms"`
	RatioP50     float64 `json:"ratio_p50"`
	RatioP99     float64 `json:"ratio_p99"`
	// API calls per ticket opened, against the least: the thread, adding
	// the opener, the welcome, the staff notification, the reply's link
	// and both clicks' answers (7). A click herald sees only after
	// Discord's deadline is rightly left unanswered, so the least counts
	// the clicks answered in time.
	CallsPerOpen     float64        `json:"calls_per_open"`
	MinimumPerOpen   float64        `json:"minimum_calls_per_open"`
	OpenCallsByRoute map[string]int `json:"open_calls_by_route"`
	// API calls per ticket closed, against the least: the command's
	// answer, which can be the closing message, one page of history per
	// 100 messages, the transcript upload, the DM channel and the DM, the
	// notification edit and the archive (7 for a short ticket).
	CallsPerClose     float64        `json:"calls_per_close"`
	MinimumPerClose   float64        `json:"minimum_calls_per_close"`
	CloseCallsByRoute map[string]int `json:"close_calls_by_route"`
	// CloseRetries counts /ticket close commands run again because herald
	// refused them or did not answer by Discord's deadline.
	CloseRetries int `json:"close_retries"`
	RateLimited  int `json:"rate_limited"`
	// A ticket holding TranscriptMessages member messages, closed: from
	// the close to the transcript's upload, the history pages read, and
	// the least the history bucket (5 pages per 5 s per channel) allows.
	TranscriptMessages  int     `json:"transcript_messages"`
	TranscriptPages     int     `json:"transcript_pages"`
	TranscriptMS        float64 `json:"transcript_ms"`
	TranscriptMinimumMS float64 `json:"transcript_minimum_ms"`
	TranscriptRatio     float64 `json:"transcript_ratio"`
}

// Unscaled limits of the tickets bench: the simulator's thread-create
// bucket (Discord's observed 5 per 5 s per parent channel).
const (
	threadCreateLimit  = 5
	threadCreateWindow = 5 * time.Second
)

// RunTickets sets tickets up through herald's commands (thread mode, a
// log channel), has members click the panel's button twice each at rate
// clicks a second, then has staff close every ticket but one, which then
// gets transcript member messages before it is closed too, on one simulator
// at scale with Discord's default limits. dbURL is a migrated database
// herald may fill.
func RunTickets(ctx context.Context, dbURL string, scale float64, members, rate, transcript int) (TicketsResult, error) {
	res := newTicketsResult(scale, members, rate)
	w, g, stop, err := heraldGuild(ctx, dbURL, scale, ticketsFixture(), members)
	if err != nil {
		return res, err
	}
	defer stop()
	panel, err := setUpTickets(w, g)
	if err != nil {
		return res, err
	}
	threads, err := res.open(w, g, panel)
	if err != nil {
		return res, err
	}
	// One ticket stays open for the transcript phase, after the others.
	var long, opener string
	for member, th := range threads {
		long, opener = th, member
		delete(threads, member)
		break
	}
	if err := res.close(w, g, threads); err != nil {
		return res, err
	}
	return res, res.transcript(w, g, long, opener, transcript)
}

// callsPerOpenedTicket is the least an open costs besides the clicks'
// answers: thread, opener, welcome, staff notification, reply's link.
const callsPerOpenedTicket = 5

// newTicketsResult is a run's result before it starts.
func newTicketsResult(scale float64, members, rate int) TicketsResult {
	return TicketsResult{TimeScale: scale, Members: members, ClickRate: rate, MinimumPerClose: 7}
}

// ticketsFixture is the bench's guild: a panel channel, an admin channel,
// a log channel and one member of staff.
func ticketsFixture() sim.Fixture {
	return sim.Fixture{Name: "tickets",
		Channels: []sim.FixtureChannel{{Name: "help", Type: 0}, {Name: "admin", Type: 0}, {Name: "log", Type: 0}},
		Roles:    []sim.FixtureRole{{Name: "helpers", Permissions: "0", Position: 1}},
		Members:  []sim.FixtureMember{{Username: "staff", Roles: []string{"helpers"}}}}
}

// setUpTickets runs /tickets setup and /tickets panel as the guild's
// owner and returns the panel's message.
func setUpTickets(w *world, g sim.FixtureResult) (*discordgo.Message, error) {
	role, ch := discordgo.ApplicationCommandOptionRole, discordgo.ApplicationCommandOptionChannel
	for _, s := range []map[string]any{
		sim.Sub("setup", sim.Opt(role, "support-role", g.Roles[0].ID), sim.Opt(ch, "log-channel", g.Channels[2].ID)),
		sim.Sub("panel", sim.Opt(ch, "channel", g.Channels[0].ID)),
	} {
		id, err := admin(w, g, "tickets", s)
		if err != nil {
			return nil, err
		}
		if err := until(10*time.Second, "the reply to /tickets "+s["name"].(string), func() bool { return replied(w, id) }); err != nil {
			return nil, err
		}
	}
	var panel *discordgo.Message
	err := until(10*time.Second, "the panel", func() bool {
		for _, m := range w.sim.ChannelMessages(g.Channels[0].ID) {
			if len(m.Components) > 0 {
				panel = m
			}
		}
		return panel != nil
	})
	return panel, err
}

// open has every member click the panel's button twice, back to back,
// at ClickRate members a second, and waits until every ticket is open
// and both clicks of every member are answered. It returns the tickets'
// threads by member.
func (res *TicketsResult) open(w *world, g sim.FixtureResult, panel *discordgo.Message) (map[string]string, error) {
	button := panel.Components[0].(*discordgo.ActionsRow).Components[0].(*discordgo.Button).CustomID
	since := time.Now()
	first := map[string]time.Time{}
	var order []string
	var clicks []click
	for i, m := range g.Members[2 : res.Members+2] {
		time.Sleep(time.Until(since.Add(time.Duration(i) * time.Second / time.Duration(res.ClickRate))))
		first[m.ID] = time.Now()
		order = append(order, m.ID)
		for range 2 {
			in, err := w.sim.Interact(sim.InteractionRequest{GuildID: g.ID, ChannelID: panel.ChannelID, UserID: m.ID,
				Kind: "component", CustomID: button, MessageID: panel.ID})
			if err != nil {
				return nil, err
			}
			clicks = append(clicks, click{id: in.ID, member: m.ID, at: time.Now()})
		}
	}
	res.Clicks = len(clicks)
	window := time.Duration(float64(threadCreateWindow) * res.TimeScale)
	arrivals := make([]time.Time, len(order))
	for i, id := range order {
		arrivals[i] = first[id]
	}
	minimum := earliest(arrivals, threadCreateLimit, window)
	deadline := 3*(minimum[len(minimum)-1]+arrivals[len(arrivals)-1].Sub(arrivals[0])) + 20*time.Second
	threads := map[string]string{} // member → thread
	// A click answered too late is refused by Discord (and counted as
	// not acked); it may still have opened a ticket. The run waits for
	// every answered click's reply and every acknowledged opener's thread.
	answerBy := res.answerBy()
	err := until(deadline, "every ticket open and every click answered", func() bool {
		clear(threads)
		res.Duplicates = 0
		snap, _ := w.sim.Guild(g.ID)
		for _, th := range snap.Threads {
			opener := ""
			for _, m := range th.Members {
				if _, isMember := first[m]; isMember {
					opener = m
				}
			}
			if _, dup := threads[opener]; dup {
				res.Duplicates++
			}
			if opener != "" {
				threads[opener] = th.ID
			}
		}
		return !slices.ContainsFunc(clicks, func(c click) bool {
			st, _ := w.sim.Interaction(c.id)
			_, open := threads[c.member]
			switch {
			case st.Acked && st.AckType == int(discordgo.InteractionResponseDeferredChannelMessageWithSource):
				return !open || !replied(w, c.id)
			case st.Acked:
				return !replied(w, c.id)
			}
			return time.Since(c.at) < answerBy
		})
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %d of %d tickets open", err, len(threads), res.Members)
	}
	res.Opened = len(threads)
	var got []float64
	for _, member := range order {
		if threads[member] == "" {
			continue // every click refused: no ticket, counted as slower than all
		}
		created, err := discordgo.SnowflakeTimestamp(threads[member])
		if err != nil {
			return nil, err
		}
		got = append(got, ms(created.Sub(first[member])))
		if n := w.sim.CountMessages(threads[member], "opened ticket #"); n != 1 {
			res.Duplicates += n - 1
		}
	}
	for _, c := range clicks {
		if st, _ := w.sim.Interaction(c.id); st.Acked && st.AckLatencyMS != nil && *st.AckLatencyMS <= 3000*res.TimeScale {
			res.Acked++
		}
	}
	v := againstLeast(got, minimum, len(order))
	res.OpenP50MS, res.OpenP99MS, res.MinimumP50MS, res.MinimumP99MS, res.RatioP50, res.RatioP99 = v.p50, v.p99, v.least50, v.least99, v.ratio50, v.ratio99
	var calls int
	calls, res.OpenCallsByRoute = res.tally(w, since)
	res.CallsPerOpen = float64(calls) / float64(res.Opened)
	res.MinimumPerOpen = float64(callsPerOpenedTicket*res.Opened+res.Acked) / float64(res.Opened)
	return threads, nil
}

// close has staff run /ticket close in every ticket at ClickRate a
// second, running again the closes herald did not take (see closes), and
// waits until every thread is archived and its transcript uploaded.
func (res *TicketsResult) close(w *world, g sim.FixtureResult, threads map[string]string) error {
	c, err := res.closes(w, g)
	if err != nil {
		return err
	}
	since := time.Now()
	i := 0
	for _, th := range threads {
		time.Sleep(time.Until(since.Add(time.Duration(i) * time.Second / time.Duration(res.ClickRate))))
		i++
		if err := c.run(th); err != nil {
			return err
		}
	}
	var runErr error
	err = until(time.Minute+time.Duration(float64(len(threads))*float64(time.Second)*res.TimeScale*10), "every ticket closed", func() bool {
		res.Closed = 0
		archived := map[string]bool{}
		snap, _ := w.sim.Guild(g.ID)
		for _, th := range snap.Threads {
			if th.Archived {
				res.Closed++
				archived[th.ID] = true
			}
		}
		if runErr = c.again(archived); runErr != nil {
			return true
		}
		return res.Closed == len(threads) && w.sim.CountMessages(g.Channels[2].ID, "Transcript of ticket #") >= len(threads)
	})
	if err = cmp.Or(runErr, err); err != nil {
		return fmt.Errorf("%w: %d of %d closed, %d closes run again", err, res.Closed, len(threads), res.CloseRetries)
	}
	res.Duplicates += w.sim.CountMessages(g.Channels[2].ID, "Transcript of ticket #") - len(threads)
	var calls int
	calls, res.CloseCallsByRoute = res.tally(w, since)
	res.CallsPerClose = float64(calls) / float64(res.Closed)
	return nil
}

// closes runs /ticket close as staff. A close herald did not take — it
// answered that it could not (busy, failed, unconfirmed: nothing is
// enqueued), or no answer came by Discord's deadline — is run again, as
// staff would, and counted in the result's CloseRetries.
type closes struct {
	w        *world
	g        sim.FixtureResult
	res      *TicketsResult
	refused  []string         // herald's answers to work it did not take
	answerBy time.Duration    // how long a close's answer is waited for
	pending  map[string]click // thread → its latest close, not yet taken
	taken    map[string]time.Time
}

func (res *TicketsResult) closes(w *world, g sim.FixtureResult) (*closes, error) {
	cat, err := i18n.Shipped()
	if err != nil {
		return nil, err
	}
	loc := cat.For("", "") // the simulator's interactions carry no locale
	return &closes{w: w, g: g, res: res, answerBy: res.answerBy(), pending: map[string]click{}, taken: map[string]time.Time{},
		refused: []string{loc.T("interaction.busy", nil), loc.T("interaction.failed", nil), loc.T("interaction.unconfirmed", nil)}}, nil
}

// run has staff run /ticket close in thread.
func (c *closes) run(thread string) error {
	at := time.Now()
	in, err := c.w.sim.Interact(sim.InteractionRequest{GuildID: c.g.ID, ChannelID: thread, UserID: c.g.Members[1].ID,
		Kind: "command", Name: "ticket", Options: []any{sim.Sub("close")}})
	if err == nil {
		c.pending[thread] = click{id: in.ID, at: at}
	}
	return err
}

// again runs again every pending close herald refused or left unanswered
// past answerBy. A close herald answered otherwise (closing, or no longer
// open) is taken, and so is one whose thread is archived.
func (c *closes) again(archived map[string]bool) error {
	for th, cl := range c.pending {
		st, _ := c.w.sim.Interaction(cl.id)
		answer, _ := st.Original["content"].(string)
		switch {
		case archived[th] || st.Acked && answer != "" && !slices.Contains(c.refused, answer):
			delete(c.pending, th)
			c.taken[th] = cl.at
		case time.Since(cl.at) >= c.answerBy:
			c.res.CloseRetries++
			if err := c.run(th); err != nil {
				return err
			}
		}
	}
	return nil
}

func (res *TicketsResult) answerBy() time.Duration { return answerBy(res.TimeScale) }

// click is one panel click: its interaction, who, when.
type click struct {
	id, member string
	at         time.Time
}

// tally counts the requests since a moment, by route, and the 429s.
func (res *TicketsResult) tally(w *world, since time.Time) (int, map[string]int) {
	byRoute := map[string]int{}
	calls := 0
	for _, r := range w.sim.Requests() {
		if r.Time.Before(since) {
			continue
		}
		calls++
		byRoute[r.Method+" "+r.Route]++
		if r.Status == http.StatusTooManyRequests {
			res.RateLimited++
		}
	}
	return calls, byRoute
}
