package faults_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/herald-bot/herald/internal/discord/rest"
	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/discord/simtest"
	"github.com/herald-bot/herald/internal/feature"
	"github.com/herald-bot/herald/internal/followup"
	"github.com/herald-bot/herald/internal/i18n"
	"github.com/herald-bot/herald/internal/interaction"
	"github.com/herald-bot/herald/internal/outbox"
	"github.com/herald-bot/herald/internal/testsupport/wait"
	"github.com/herald-bot/herald/internal/work"
)

// actID is the button members click in the fault tests.
const actID = "fault:1:act"

// effects is the feature the fault tests drive: a click enqueues a job
// that posts one message in the channel, fills the member's reply and
// sends one follow-up — three effects that must each happen once.
func effects() feature.Feature {
	return feature.Feature{Name: "faults", Build: func(k feature.Kit) error {
		k.Routes.Component(actID, func(ctx context.Context, in *interaction.Interaction) (*discordgo.InteractionResponse, error) {
			err := in.Enqueue(ctx, outbox.IntentEvent, river.InsertManyParams{
				Args:       effectArgs{InteractionID: in.ID, ChannelID: in.ChannelID},
				InsertOpts: &river.InsertOpts{Queue: string(work.Interactive)}})
			return interaction.Deferred(true), err
		})
		work.Register(k.Jobs, &effectWorker{discord: k.Discord, followups: k.Followups})
		return nil
	}}
}

type effectArgs struct {
	InteractionID string `json:"interaction_id"`
	ChannelID     string `json:"channel_id"`
}

func (effectArgs) Kind() string { return "fault_effect" }

type effectWorker struct {
	river.WorkerDefaults[effectArgs]
	discord   *rest.Client
	followups *followup.Sender
}

func (w *effectWorker) Work(ctx context.Context, j *river.Job[effectArgs]) error {
	id := j.Args.InteractionID
	if _, err := w.discord.CreateMessage(ctx, j.Args.ChannelID, rest.NewMessage{Content: "effect " + id, Nonce: "effect-" + id}); err != nil {
		return err
	}
	for _, step := range []string{"done", "extra"} {
		if _, err := w.followups.Send(ctx, followup.Update{Lane: work.Interactive, InteractionID: id, Key: step + "-" + id,
			Content: step + " " + id}); err != nil {
			return err
		}
	}
	return nil
}

// clicks sends clicks on msg, one every gap, from the fixture's members,
// and remembers them.
type clicks struct {
	s   *simtest.Sim
	g   sim.FixtureResult
	msg string
	mu  sync.Mutex
	all []sim.InteractionCreated
}

// burst clicks until the returned stop is called.
func (c *clicks) burst(gap time.Duration) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	members := []string{"alice", "bob", "carol", "dave"}
	go func() {
		defer close(finished)
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			case <-time.After(gap):
			}
			in, err := c.s.Server.Interact(sim.InteractionRequest{GuildID: c.g.ID, ChannelID: c.g.Channel("general"),
				UserID: c.g.Member(members[i%len(members)]), Kind: "component", CustomID: actID, MessageID: c.msg})
			if err != nil {
				continue
			}
			c.mu.Lock()
			c.all = append(c.all, in)
			c.mu.Unlock()
		}
	}()
	return func() { close(done); <-finished }
}

// tally is what the simulator saw of the clicks.
type tally struct {
	interactions, acked, busy, unconfirmed, unanswered, lost, duplicated int
	slowestAckMS                                                         float64
	problems                                                             []string
}

// String is the tally as the fault tests print it.
func (r tally) String() string {
	return fmt.Sprintf("acknowledged %d, busy %d, unconfirmed %d, unanswered %d, slowest answer %.0f ms; lost = %d, duplicated = %d",
		r.acked, r.busy, r.unconfirmed, r.unanswered, r.slowestAckMS, r.lost, r.duplicated)
}

// check counts, for every click, the effects the simulator holds: an
// acknowledged click (answered deferred) must have its message, its
// reply and its follow-up (or, when the follow-up's answer was lost, its
// text merged into the reply) exactly once; no click may have anything
// twice; a click answered "busy" must have nothing. A click answered
// "unconfirmed" — its write's outcome unknown when the answer was due —
// may have its effects once or not at all, and only a click whose write
// could meet Postgres's fault may be answered so (see outage).
func (c *clicks) check(t *testing.T, fault outage) tally {
	t.Helper()
	effects := map[string]int{}
	for _, m := range c.s.Messages(c.g.Channel("general")) {
		if id, ok := strings.CutPrefix(m.Content, "effect "); ok {
			effects[id]++
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var r tally
	problem := func(format string, args ...any) { r.problems = append(r.problems, fmt.Sprintf(format, args...)) }
	for _, in := range c.all {
		r.interactions++
		st := c.s.Interaction(in.ID)
		if st.AckLatencyMS != nil {
			r.slowestAckMS = max(r.slowestAckMS, *st.AckLatencyMS)
		}
		if st.Followups > 1 || effects[in.ID] > 1 {
			r.duplicated++
			problem("%s: %d messages, %d follow-ups", in.ID, effects[in.ID], st.Followups)
		}
		switch r.classify(t, in.ID, st, fault) {
		case "acked":
			reply, _ := st.Original["content"].(string)
			extra := st.Followups == 1 || strings.Contains(reply, "extra "+in.ID)
			if effects[in.ID] != 1 || !strings.HasPrefix(reply, "done "+in.ID) || !extra {
				r.lost++
				problem("%s acknowledged: %d messages, reply %q, %d follow-ups", in.ID, effects[in.ID], reply, st.Followups)
			}
		case "busy":
			if effects[in.ID] != 0 {
				problem("%s answered busy but had an effect", in.ID)
			}
		case "other":
			problem("%s answered with type %d %q: neither the feature's answer nor a refusal", in.ID, st.AckType, st.Original["content"])
		}
	}
	return r
}

// classify counts a click by the answer the simulator recorded for it:
// "acked" (answered deferred, as every feature of these tests answers
// work it took), "busy" or
// "unconfirmed" (the fast path's refusals, by their text; unconfirmed
// outside the fault's reach is a problem), "unanswered", or "other": an
// answer of the feature's own, which the caller judges.
func (r *tally) classify(t *testing.T, id string, st sim.InteractionStatus, fault outage) string {
	t.Helper()
	switch {
	case st.Acked && st.AckType == int(discordgo.InteractionResponseDeferredChannelMessageWithSource):
		r.acked++
		return "acked"
	case !st.Acked:
		r.unanswered++
		return "unanswered"
	case st.AckContent == refusal(t, "interaction.busy"):
		r.busy++
		return "busy"
	case st.AckContent == refusal(t, "interaction.unconfirmed"):
		r.unconfirmed++
		if !fault.reaches(t, id) {
			r.problems = append(r.problems, fmt.Sprintf("%s answered unconfirmed, but Postgres had no fault within Discord's 3 s of it (fault %s)", id, fault))
		}
		return "unconfirmed"
	}
	return "other"
}

// outage is when Postgres was unreachable for herald (zero: never). Only
// a click Discord created at most its 3 s deadline before the outage
// began, or during it, can have a write whose outcome herald could not
// learn in time.
type outage struct{ from, to time.Time }

// reaches reports whether the fault could touch the click id, by the
// creation time its snowflake carries.
func (o outage) reaches(t *testing.T, id string) bool {
	t.Helper()
	created, err := discordgo.SnowflakeTimestamp(id)
	if err != nil {
		t.Fatal(err)
	}
	return !o.from.IsZero() && created.After(o.from.Add(-3*time.Second)) && !created.After(o.to)
}

func (o outage) String() string {
	if o.from.IsZero() {
		return "none"
	}
	return o.from.Format("15:04:05.000") + "–" + o.to.Format("15:04:05.000")
}

// refusal is the fast path's answer key in the members' language (the
// simulator's members use en-US).
func refusal(t *testing.T, key string) string {
	t.Helper()
	c, err := i18n.Shipped()
	if err != nil {
		t.Fatal(err)
	}
	return c.For("", "en-US").T(key, nil)
}

// drainTimeout bounds the wait for the last jobs: a process killed while
// River's leader leaves its lease for 15 s, the next leader's rescuer
// reruns jobs that died running, and retries run through its scheduler.
const drainTimeout = 90 * time.Second

// drained waits until herald has no effect left to do.
func drained(t *testing.T, db *pgxpool.Pool) {
	t.Helper()
	jobsDrained(t, db, effectArgs{}.Kind())
}

// jobsDrained waits until herald has no job of kind left to do: nothing
// in the outbox, queued, running or waiting to retry. On failure it
// lists what is left.
func jobsDrained(t *testing.T, db *pgxpool.Pool, kind string) {
	t.Helper()
	defer func() {
		if !t.Failed() {
			return
		}
		rows, err := db.Query(context.Background(), `SELECT id, state, attempt, scheduled_at, attempted_at, errors::text
			FROM river_job WHERE kind = $1 AND state NOT IN ('completed') ORDER BY id`, kind)
		if err != nil {
			t.Log(err)
			return
		}
		defer rows.Close()
		for rows.Next() {
			var id int64
			var state string
			var attempt int
			var scheduled time.Time
			var attempted *time.Time
			var errs *string
			rows.Scan(&id, &state, &attempt, &scheduled, &attempted, &errs)
			e := ""
			if errs != nil {
				e = *errs
			}
			t.Logf("left: job %d %s attempt %d scheduled %s attempted %v errors %s", id, state, attempt, scheduled.Format(time.StampMilli), attempted, e)
		}
	}()
	wait.Within(t, drainTimeout, "every "+kind+" job to finish", func() bool {
		var n int
		err := db.QueryRow(t.Context(), `SELECT (SELECT count(*) FROM river_job WHERE kind = $1
			AND state IN ('available', 'scheduled', 'running', 'retryable', 'pending'))
			+ (SELECT count(*) FROM interaction_outbox)`, kind).Scan(&n)
		return err == nil && n == 0
	})
}
