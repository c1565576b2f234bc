package rolemenu

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/riverqueue/river"

	"github.com/herald-bot/herald/internal/followup"
	"github.com/herald-bot/herald/internal/outbox"
	"github.com/herald-bot/herald/internal/work"
)

// A click's reply is filled after its role change, and Discord lets herald
// fill it only while the interaction's token lives (15 minutes). A
// guild's member-role bucket lets a bot change about one role a second,
// so in a rush of a thousand clicks the last changes come after their
// tokens end. The notice job, every fifteenth of the token's life, looks
// at the clicks waiting longer than half of it, estimates when each
// member's change comes (the members ahead of them in the guild, at the
// rate the guild's changes were made lately), and tells those whose
// change comes after their reply closes, in that reply, when to expect
// it, with a margin of two runs for the estimate (so every member still
// waiting in the last two runs before the reply closes). The notice is the
// click's one reply: the result is not sent after it (the member was told
// when to look; only a change that could not be made is reported), so a
// notice never costs a second call. Results replaced
// by a notice, and those lost to a token that ended without one, are
// counted (herald_rolemenu_late_replies_total by notice), and /herald
// status says how many members were told.

// noticeArgs is the notice job's (periodic; no fields).
type noticeArgs struct{}

func (noticeArgs) Kind() string { return "rolemenu_notice" }

// noticeJob runs the notice job every fifteenth of the token's life, on
// the events lane: in a rush the interactive lane's workers are the apply
// jobs waiting on the member-role bucket, the very wait it announces.
func noticeJob(tokenLife time.Duration) *river.PeriodicJob {
	return river.NewPeriodicJob(river.PeriodicInterval(tokenLife/15), func() (river.JobArgs, *river.InsertOpts) {
		return noticeArgs{}, &river.InsertOpts{Queue: string(work.Events)}
	}, nil)
}

type noticeWorker struct {
	river.WorkerDefaults[noticeArgs]
	*deps
}

func (w *noticeWorker) Work(ctx context.Context, _ *river.Job[noticeArgs]) error {
	_, err := w.notice(ctx, time.Now())
	return err
}

// What the notice job did for a click (rolemenu_clicks.notice).
const (
	noticeGiven   = "given"
	noticeTooLate = "too_late" // the token ended before the job came to it
)

// waiting is a click still waiting for its change, as the notice job
// reads it: ahead is how many other members of its guild have clicks
// queued before its member's first (a member's clicks are applied
// together).
type waiting struct {
	id       int64
	guildID  string
	received time.Time
	ahead    int
	followup.Reply
}

// notice tells the members whose change will come after their reply
// closes, as of now, and returns how many it told.
func (d *deps) notice(ctx context.Context, now time.Time) (int, error) {
	life := d.tokenLife
	// Every waiting click is looked at, the newest too (a bound on the
	// oldest would look at the front of the queue only, which is served
	// first): one sort of the waiting clicks, no query per click.
	rows, err := d.db.Query(ctx, `WITH members AS (
			SELECT guild_id, user_id, rank() OVER (PARTITION BY guild_id ORDER BY min(id)) - 1 AS ahead
			FROM rolemenu_clicks GROUP BY guild_id, user_id)
		SELECT c.id, c.guild_id, c.received_at, c.interaction_id, c.locale, c.guild_locale, m.ahead
		FROM rolemenu_clicks c JOIN members m USING (guild_id, user_id)
		WHERE c.notice IS NULL AND c.received_at < $1 ORDER BY c.id`, now.Add(-life/2))
	if err != nil {
		return 0, fmt.Errorf("rolemenu: late clicks: %w", err)
	}
	clicks, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (waiting, error) {
		var c waiting
		return c, r.Scan(&c.id, &c.guildID, &c.received, &c.InteractionID, &c.Locale, &c.GuildLocale, &c.ahead)
	})
	if err != nil || len(clicks) == 0 {
		return 0, err
	}
	rates := map[string]float64{}
	told := 0
	for _, c := range clicks {
		rate, ok := rates[c.guildID]
		if !ok {
			if rate, err = d.changeRate(ctx, c.guildID, now, life); err != nil {
				return told, err
			}
			rates[c.guildID] = rate
		}
		tell, closes, eta := c.late(now, life, rate)
		if !tell {
			continue
		}
		known := !eta.IsZero()
		loc := c.In(d.catalog)
		vars := map[string]any{"Closes": fmt.Sprintf("<t:%d:t>", closes.Unix())}
		key := "rolemenu.late_unknown"
		if known {
			key, vars["When"] = "rolemenu.late", fmt.Sprintf("<t:%d:R>", eta.Unix())
		}
		notice := noticeGiven
		_, err := d.followups.Send(ctx, followup.Update{Lane: work.Interactive, InteractionID: c.InteractionID, Key: "rolemenu-notice",
			Content: loc.T(key, vars)})
		switch {
		case errors.Is(err, outbox.ErrTokenExpired):
			notice = noticeTooLate
		case err != nil:
			return told, err
		default:
			told++
		}
		if _, err := d.db.Exec(ctx, `UPDATE rolemenu_clicks SET notice = $2 WHERE id = $1`, c.id, notice); err != nil {
			return told, fmt.Errorf("rolemenu: mark notice: %w", err)
		}
	}
	return told, nil
}

// late reports whether c's member is to be told, as of now, that the
// change comes after the reply closes (at closes), and when it is
// expected (zero: unknown, the guild's changes have stalled), given the
// token's life and the guild's rate of members served per second. The
// reply closes a little before the token ends: the edit itself needs
// time. A change expected less than two runs of the job before that is
// announced too (the estimate may be late by a run's worth): so every
// change still waiting in the last two runs before the close is.
func (c waiting) late(now time.Time, life time.Duration, rate float64) (tell bool, closes, eta time.Time) {
	run := life / 15
	closes = c.received.Add(life - run)
	if rate <= 0 {
		return true, closes, time.Time{}
	}
	eta = now.Add(time.Duration(float64(c.ahead+1) / rate * float64(time.Second)))
	return !eta.Before(closes.Add(-2 * run)), closes, eta
}

// changeRate is how many members a second the guild's role changes
// served lately (over the last half of the token's life, as long as the
// clicks looked at have waited), 0 when fewer than two were served: the
// changes are stalled.
func (d *deps) changeRate(ctx context.Context, guildID string, now time.Time, life time.Duration) (float64, error) {
	var members int
	var first, last *time.Time
	if err := d.db.QueryRow(ctx, `SELECT count(DISTINCT user_id), min(done_at), max(done_at) FROM rolemenu_role_changes
		WHERE guild_id = $1 AND done_at > $2`, guildID, now.Add(-life/2)).Scan(&members, &first, &last); err != nil {
		return 0, fmt.Errorf("rolemenu: change rate: %w", err)
	}
	if members < 2 || first == nil || !last.After(*first) {
		return 0, nil
	}
	// The changes stopped since the last one: the rate is over until now.
	return float64(members-1) / now.Sub(*first).Seconds(), nil
}

// lateReplies counts results not sent: replaced by a notice ("given"), or
// lost without one because the click's token ended first or Discord
// refused it, as after an answer that missed its 3 s ("none").
func lateReplies(reg prometheus.Registerer) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "herald_rolemenu_late_replies_total",
		Help: "Role-menu results not sent: replaced by a notice of when to expect the change (notice=given), or lost because the click's interaction token ended first or Discord refused it (notice=none).",
	}, []string{"notice"})
	if reg != nil {
		reg.MustRegister(c)
	}
	return c
}
