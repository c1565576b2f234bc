package status

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/rivertype"

	"github.com/herald-bot/herald/internal/cluster"
	"github.com/herald-bot/herald/internal/discord/intents"
	"github.com/herald-bot/herald/internal/discord/transport"
	"github.com/herald-bot/herald/internal/feature"
	"github.com/herald-bot/herald/internal/i18n"
	"github.com/herald-bot/herald/internal/work"
)

// statusView is /herald status (followup.View).
type statusView struct{}

func (statusView) Kind() string { return "status_report" }

// text is /herald status: the summary as it is now.
func (s summary) text(ctx context.Context, guildID string, loc *i18n.Localizer) (string, error) {
	now := time.Now()
	return s.render(ctx, guildID, loc, loc.T("status.title", map[string]any{"Now": now.Unix()}), now, true)
}

// summary builds the status text of a guild, for /herald status and the
// board. It reads everything from the database and the REST engine as
// they are now — no counter of its own that could drift.
type summary struct {
	db      *pgxpool.Pool
	reports *feature.Reports
	// jobs labels the job kinds the summary names.
	jobs   *work.Registry
	health func() transport.Health
	// missing are the features' needs the application's privileged
	// intents do not meet, as read at start.
	missing []feature.Need
}

// render is the guild's summary under head, within one message. Without
// moving, it leaves out the figures that move by themselves from one
// second to the next (the buckets each process holds, leased and let go
// as requests come and go): the board is edited only for a change an
// admin would act on.
func (s summary) render(ctx context.Context, guildID string, loc *i18n.Localizer, head string, now time.Time, moving bool) (string, error) {
	lanes, err := laneLines(ctx, s.db, guildID)
	if err != nil {
		return "", err
	}
	waits, fails, err := troubleLines(ctx, s.db, guildID, loc, s.jobs, now)
	if err != nil {
		return "", err
	}
	objects, err := s.reports.Collect(ctx, guildID, loc)
	if err != nil {
		return "", err
	}
	intentLines := missingLines(loc, s.missing)
	sections := []section{
		{loc.T("status.intents_title", nil), intentLines},
		{loc.T("status.lanes_title", nil), lanes},
		{loc.T("status.waiting_title", nil), waits},
		{loc.T("status.failed_title", nil), fails},
		{loc.T("status.objects_title", nil), objects},
		{loc.T("status.transport_title", nil), append(healthLines(loc, s.health(), now), processLines(ctx, s.db, loc, s.health(), moving)...)},
	}
	if len(intentLines)+len(waits)+len(fails)+len(objects) == 0 {
		head += "\n" + loc.T("status.all_clear", nil)
	}
	return render(loc, head, sections, maxContent), nil
}

// missingLines names each privileged intent herald runs without, what it
// turns off and where the owner switches it on.
func missingLines(loc *i18n.Localizer, missing []feature.Need) []string {
	var lines []string
	for _, p := range intents.All {
		var off []string
		for _, n := range missing {
			if n.Intent == p {
				off = append(off, loc.T(n.Without, nil))
			}
		}
		if len(off) > 0 {
			lines = append(lines, loc.T("status.intent_missing", map[string]any{"Intent": p.Name, "Off": strings.Join(off, "; ")}))
		}
	}
	return lines
}

// laneLines counts the guild's jobs per lane the way work.StateOf names
// them; failed counts the last 24 hours.
func laneLines(ctx context.Context, db *pgxpool.Pool, guildID string) ([]string, error) {
	rows, err := db.Query(ctx, `SELECT `+work.LaneOfQueue+`,
		count(*) FILTER (WHERE state IN ('available', 'pending', 'scheduled') AND NOT `+waiting+`),
		count(*) FILTER (WHERE state = 'running'),
		count(*) FILTER (WHERE `+waiting+`),
		count(*) FILTER (WHERE finalized_at > now() - interval '24 hours' AND (state = 'discarded' OR (state = 'cancelled'
			AND metadata->'output'->>'reason' IN ('needs_permission', 'target_missing', 'invalid', 'retries_exhausted')))
			AND NOT `+superseded+`)
		FROM river_job j WHERE metadata @> jsonb_build_object($1::text, $2::text) GROUP BY 1`, work.MetadataGuild, guildID)
	if err != nil {
		return nil, fmt.Errorf("status: lanes: %w", err)
	}
	counts := map[string][4]int64{}
	for rows.Next() {
		var lane string
		var c [4]int64
		if err := rows.Scan(&lane, &c[0], &c[1], &c[2], &c[3]); err != nil {
			return nil, fmt.Errorf("status: lanes: %w", err)
		}
		counts[lane] = c
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("status: lanes: %w", err)
	}
	var lines []string
	for _, lane := range work.Lanes() {
		c := counts[string(lane)]
		// The title names the columns in the admin's language.
		lines = append(lines, fmt.Sprintf("`%s`: %d · %d · %d · %d", lane, c[0], c[1], c[2], c[3]))
	}
	return lines, nil
}

// troubles bounds how many of the guild's waiting and failed jobs one
// report reads.
const troubles = 200

// waiting holds for a job work.StateOf calls waiting: retrying, or
// tried and held until later (River keeps a short snooze available).
const waiting = `(state = 'retryable' OR (state IN ('available', 'pending', 'scheduled') AND scheduled_at > now()
	AND (attempt > 0 OR metadata ? 'output')))`

// superseded holds for a finished job j when the same work (kind and
// arguments) completed later: a failure an admin has since fixed.
const superseded = `EXISTS (SELECT 1 FROM river_job k WHERE k.kind = j.kind AND k.args = j.args AND k.state = 'completed' AND k.id > j.id)`

// troubleLines lists the guild's waiting jobs and those failed in the
// last 24 hours and not superseded, grouped by what they do and why, with until when a
// waiting group waits and the fix of a failed one.
func troubleLines(ctx context.Context, db *pgxpool.Pool, guildID string, loc *i18n.Localizer, labels *work.Registry, now time.Time) (waits, fails []string, err error) {
	rows, err := db.Query(ctx, `SELECT id, kind, state, attempt, scheduled_at, metadata FROM river_job j
		WHERE metadata @> jsonb_build_object($1::text, $2::text)
			AND (`+waiting+`
				OR (state IN ('discarded', 'cancelled') AND finalized_at > now() - interval '24 hours' AND NOT `+superseded+`))
		ORDER BY id DESC LIMIT $3`, work.MetadataGuild, guildID, troubles)
	if err != nil {
		return nil, nil, fmt.Errorf("status: troubles: %w", err)
	}
	jobs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*rivertype.JobRow, error) {
		j := &rivertype.JobRow{}
		var state string
		err := r.Scan(&j.ID, &j.Kind, &state, &j.Attempt, &j.ScheduledAt, &j.Metadata)
		j.State = rivertype.JobState(state)
		return j, err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("status: troubles: %w", err)
	}
	type group struct {
		kind   string
		reason work.Reason
		count  int
		until  time.Time
	}
	var waitGroups, failGroups []*group
	add := func(gs []*group, kind string, reason work.Reason, until time.Time) []*group {
		for _, g := range gs {
			if g.kind == kind && g.reason == reason {
				g.count++
				if until.After(g.until) {
					g.until = until
				}
				return gs
			}
		}
		return append(gs, &group{kind: kind, reason: reason, count: 1, until: until})
	}
	for _, j := range jobs {
		switch st := work.StateOf(j, now); st.Name {
		case "waiting":
			until := st.Until
			if until.IsZero() || until.Before(j.ScheduledAt) {
				until = j.ScheduledAt
			}
			waitGroups = add(waitGroups, j.Kind, st.Reason, until)
		case "failed":
			failGroups = add(failGroups, j.Kind, st.Reason, time.Time{})
		}
	}
	for _, g := range waitGroups {
		waits = append(waits, loc.T("status.waiting", map[string]any{"What": kindLabel(loc, labels, g.kind), "Count": g.count,
			"Reason": loc.T("status.wait_reason."+reasonKey(g.reason), nil), "Until": g.until.Unix()}))
	}
	for _, g := range failGroups {
		fails = append(fails, loc.T("status.failed", map[string]any{"What": kindLabel(loc, labels, g.kind), "Count": g.count,
			"Reason": loc.T("status.fail_reason."+reasonKey(g.reason), nil), "Fix": loc.T("status.fix."+reasonKey(g.reason), nil)}))
	}
	return waits, fails, nil
}

// reasonKey names a reason in the catalog; a job retrying after an error
// Discord did not classify has none.
func reasonKey(r work.Reason) string {
	if r == "" {
		return "retrying"
	}
	return string(r)
}

// kindLabel is what a job kind does, in the admin's words, or the kind
// itself for one the catalog does not name.
func kindLabel(loc *i18n.Localizer, jobs *work.Registry, kind string) string {
	if key := jobs.LabelKey(kind); key != "" {
		if s := loc.T(key, nil); s != key {
			return s
		}
	}
	return "`" + kind + "`"
}

// healthLines is the REST engine's state: what holds every request or
// some, and the invalid-request budget.
func healthLines(loc *i18n.Localizer, h transport.Health, now time.Time) []string {
	var lines []string
	if h.Unauthorized {
		lines = append(lines, loc.T("status.unauthorized", nil))
	}
	if h.EdgeBlockedUntil.After(now) {
		lines = append(lines, loc.T("status.edge_blocked", map[string]any{"Reason": h.EdgeBlockedReason, "Until": h.EdgeBlockedUntil.Unix()}))
	}
	if h.GlobalGateUntil.After(now) {
		lines = append(lines, loc.T("status.global_gate", map[string]any{"Until": h.GlobalGateUntil.Unix()}))
	}
	if h.Degraded {
		lines = append(lines, loc.T("status.degraded", map[string]any{"Failing": h.Failing}))
	}
	for _, c := range h.OpenCircuits {
		lines = append(lines, loc.T("status.breaker", map[string]any{"Route": "`" + c.Route + "`", "Since": c.Since.Unix(), "Failures": c.ConsecutiveFailures}))
	}
	return append(lines, loc.T("status.invalid", map[string]any{"Invalid": h.InvalidRequests, "Limit": h.InvalidLimit}))
}

// processLines lists the herald processes sharing the bot's token, the
// shards each serves and, with buckets, the buckets it holds, and this
// process's share of the global limit now.
func processLines(ctx context.Context, db *pgxpool.Pool, loc *i18n.Localizer, h transport.Health, buckets bool) []string {
	members, err := cluster.Live(ctx, db)
	if err != nil || len(members) == 0 {
		return nil
	}
	lines := []string{loc.T("status.processes", map[string]any{"Count": len(members), "Share": h.GlobalShare})}
	for _, m := range members {
		shards := make([]string, len(m.Shards))
		for i, s := range m.Shards {
			shards[i] = strconv.Itoa(s)
		}
		vars := map[string]any{"Host": m.Host, "Version": m.Version, "Shards": strings.Join(shards, ", "), "Since": m.Started.Unix(), "Buckets": ""}
		if buckets {
			vars["Buckets"] = strconv.Itoa(m.Buckets)
		}
		lines = append(lines, loc.T("status.process", vars))
	}
	return lines
}

// section is a titled list of lines; empty ones are left out.
type section struct {
	title string
	lines []string
}

// maxContent keeps the reply within Discord's 2,000 characters.
const maxContent = 2000

// render joins the head and the sections, cutting the longest lists
// first, with a count of what was left out, until the text fits in max.
func render(loc *i18n.Localizer, head string, sections []section, max int) string {
	shown := make([]int, len(sections))
	for i, s := range sections {
		shown[i] = len(s.lines)
	}
	for {
		var b strings.Builder
		b.WriteString(head)
		for i, s := range sections {
			if len(s.lines) == 0 {
				continue
			}
			b.WriteString("\n\n" + s.title)
			for _, l := range s.lines[:shown[i]] {
				b.WriteString("\n• " + l)
			}
			if left := len(s.lines) - shown[i]; left > 0 {
				b.WriteString("\n" + loc.T("status.more", map[string]any{"Count": left}))
			}
		}
		text := b.String()
		longest := 0
		for i := range shown {
			if shown[i] > shown[longest] {
				longest = i
			}
		}
		if len([]rune(text)) <= max || shown[longest] == 0 {
			return text
		}
		shown[longest]--
	}
}
