package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/interaction"
	"github.com/herald-bot/herald/internal/work"
)

// RoleMenuResult is what `herald bench rolemenu --json` prints. Times
// are wall-clock milliseconds on the time-scaled simulator; divide by
// TimeScale for Discord's unscaled time. Ratios are the same either way.
type RoleMenuResult struct {
	TimeScale float64 `json:"time_scale"`
	Members   int     `json:"members"`
	Clicks    int     `json:"clicks"`
	// ClickRate is the clicks sent per wall-clock second.
	ClickRate int `json:"click_rate"`
	// Acked counts clicks answered within Discord's (scaled) 3 seconds.
	Acked int `json:"acked"`
	// Applied counts clicks whose role change the simulator made.
	Applied int `json:"applied"`
	// Click-to-role-applied latency: from the click to the simulator's
	// answer to the role change it asked for.
	AppliedP50MS float64 `json:"applied_p50_ms"`
	AppliedP99MS float64 `json:"applied_p99_ms"`
	// The same for the earliest the member-role bucket allows: every
	// change sent the moment its click arrives or the bucket has room, in
	// click order.
	MinimumP50MS float64 `json:"minimum_p50_ms"`
	MinimumP99MS float64 `json:"minimum_p99_ms"`
	RatioP50     float64 `json:"ratio_p50"`
	RatioP99     float64 `json:"ratio_p99"`
	// CallsPerClick counts every request the clicks caused (answers,
	// role changes, member and role reads, reply edits) per click; a click
	// needs at least 3: its answer, its role change and its reply.
	CallsPerClick     float64        `json:"calls_per_click"`
	ClickCallsByRoute map[string]int `json:"click_calls_by_route"`
	// A click whose change waited past the interaction's token (15
	// minutes) cannot get its result as a reply: RepliesNoticed counts
	// those whose reply, filled while the token lived, told the member
	// when to expect the change; RepliesLost those with no reply at all
	// (the member was never told).
	RepliesNoticed int `json:"replies_noticed"`
	RepliesLost    int `json:"replies_lost"`
	RateLimited    int `json:"rate_limited"`
	// ExtraRoleCalls counts role-change calls past one per member and
	// role changed: repeats and refusals (none when each click's change
	// is sent once, within the bucket).
	ExtraRoleCalls int `json:"extra_role_calls"`
	// ConfigChanges quick option edits to a published menu, and what each
	// cost; a bot editing the message on every change spends 2 (the
	// answer and the edit), the least is 1 plus one edit for them all.
	ConfigChanges          int            `json:"config_changes"`
	CallsPerConfigChange   float64        `json:"calls_per_config_change"`
	MinimumPerConfigChange float64        `json:"minimum_calls_per_config_change"`
	NaivePerConfigChange   float64        `json:"naive_calls_per_config_change"`
	MessageEdits           int            `json:"message_edits"`
	ConfigCallsByRoute     map[string]int `json:"config_calls_by_route"`
	// ConfigSpanMS is from the first edit sent to the last one answered:
	// edits within herald's publish delay (1 s) fold into one message
	// edit. ConfigRetries counts edits run again because Discord did not
	// see them answered in time (the admin saw them fail).
	ConfigSpanMS  float64 `json:"config_span_ms"`
	ConfigRetries int     `json:"config_retries"`
}

// Unscaled limits of the role-menu bench: Discord's member-role bucket
// (PUT and DELETE .../members/{user}/roles/{role}, per guild).
const (
	memberRoleLimit  = 10
	memberRoleWindow = 10 * time.Second
	memberRoleRoute  = "/guilds/{guild_id}/members/{user_id}/roles/{role_id}"
	messageEditRoute = "/channels/{channel_id}/messages/{message_id}"
)

// RunRoleMenu sets up a two-option menu through herald's own commands,
// edits it quickly configChanges times, then has members click both
// options (clicks = 2 × members, every click one role to add) at rate a
// second, on one simulator at scale with Discord's
// default limits. dbURL is a migrated database herald may fill.
func RunRoleMenu(ctx context.Context, dbURL string, scale float64, members, configChanges, rate int) (RoleMenuResult, error) {
	res := RoleMenuResult{TimeScale: scale, Members: members, ConfigChanges: configChanges, ClickRate: rate}
	w, g, stop, err := heraldGuild(ctx, dbURL, scale, sim.Fixture{Name: "rolemenu",
		Channels: []sim.FixtureChannel{{Name: "roles", Type: 0}, {Name: "admin", Type: 0}},
		Roles:    []sim.FixtureRole{{Name: "news", Permissions: "0", Position: 1}, {Name: "events", Permissions: "0", Position: 2}}}, members)
	if err != nil {
		return res, err
	}
	defer stop()

	menu, err := setUpMenu(w, g)
	if err != nil {
		return res, err
	}
	if err := res.configure(w, g, menu); err != nil {
		return res, err
	}
	err = res.click(w, g, menu)
	return res, err
}

// publishedMenu is the menu's message and its two buttons.
type publishedMenu struct {
	channelID, messageID string
	buttons              []string // custom ids, one per role in g.Roles order
}

// admin runs one slash command as the guild's owner in #admin and
// returns the interaction's id.
func admin(w *world, g sim.FixtureResult, name string, options ...any) (string, error) {
	in, err := w.sim.Interact(sim.InteractionRequest{GuildID: g.ID, ChannelID: g.Channels[1].ID, UserID: g.Members[0].ID,
		Kind: "command", Name: name, Options: options})
	return in.ID, err
}

// setUpMenu creates the menu "bench" with both roles and publishes it in
// #roles, as an admin would, and waits for its message.
func setUpMenu(w *world, g sim.FixtureResult) (publishedMenu, error) {
	str, role, ch := discordgo.ApplicationCommandOptionString, discordgo.ApplicationCommandOptionRole, discordgo.ApplicationCommandOptionChannel
	steps := [][]any{{sim.Sub("create", sim.Opt(str, "name", "bench"))}}
	for _, r := range g.Roles {
		steps = append(steps, []any{sim.Sub("option", sim.Sub("add", sim.Opt(str, "menu", "bench"), sim.Opt(role, "role", r.ID)))})
	}
	steps = append(steps, []any{sim.Sub("publish", sim.Opt(str, "menu", "bench"), sim.Opt(ch, "channel", g.Channels[0].ID))})
	for _, s := range steps {
		id, err := admin(w, g, "rolemenu", s...)
		if err != nil {
			return publishedMenu{}, err
		}
		// Each step needs the one before: wait for its reply.
		if err := until(10*time.Second, "the reply to "+fmt.Sprint(s), func() bool { return replied(w, id) }); err != nil {
			return publishedMenu{}, err
		}
	}
	var m publishedMenu
	err := until(10*time.Second, "the published menu", func() bool {
		var ok bool
		m, ok = readMenu(w, g, func(b []discordgo.Button) bool { return len(b) == len(g.Roles) })
		return ok
	})
	return m, err
}

// readMenu finds the menu's message in #roles when its buttons satisfy ok.
func readMenu(w *world, g sim.FixtureResult, ok func([]discordgo.Button) bool) (publishedMenu, bool) {
	msgs, _ := w.sim.Messages(g.Channels[0].ID)
	for _, raw := range msgs {
		b, _ := json.Marshal(raw)
		var msg discordgo.Message
		if json.Unmarshal(b, &msg) != nil {
			continue
		}
		bs := interaction.Buttons(&msg)
		if ok(bs) {
			m := publishedMenu{channelID: msg.ChannelID, messageID: msg.ID}
			for _, b := range bs {
				m.buttons = append(m.buttons, b.CustomID)
			}
			return m, true
		}
	}
	return publishedMenu{}, false
}

// replied reports whether the interaction's original response has
// content: an answer, or a deferred one filled by a job.
func replied(w *world, id string) bool {
	st, _ := w.sim.Interaction(id)
	return st.Original != nil && st.Original["content"] != ""
}

// configure makes ConfigChanges quick label edits, one after another, to the published menu
// and counts what they cost until the message shows the last one and no
// further edit follows.
func (res *RoleMenuResult) configure(w *world, g sim.FixtureResult, m publishedMenu) error {
	str, role := discordgo.ApplicationCommandOptionString, discordgo.ApplicationCommandOptionRole
	since := time.Now()
	ids := make([]string, 0, res.ConfigChanges)
	for i := 0; i < res.ConfigChanges; {
		id, err := admin(w, g, "rolemenu", sim.Sub("option", sim.Sub("edit", sim.Opt(str, "menu", "bench"), sim.Opt(role, "role", g.Roles[0].ID),
			sim.Opt(str, "label", fmt.Sprintf("News %d", i)))))
		if err != nil {
			return err
		}
		// An admin sends the next command once the last is answered:
		// sent at once, they would take the menu's lock in any order. One
		// Discord did not see answered in time failed in their client:
		// they run it again.
		if until(answerBy(res.TimeScale), "", func() bool { st, _ := w.sim.Interaction(id); return st.Acked }) != nil {
			if res.ConfigRetries++; res.ConfigRetries > res.ConfigChanges {
				return fmt.Errorf("bench: %d edits not answered in time", res.ConfigRetries)
			}
			continue
		}
		ids = append(ids, id)
		i++
	}
	res.ConfigSpanMS = ms(time.Since(since))
	last := fmt.Sprintf("News %d", res.ConfigChanges-1)
	err := until(30*time.Second, "the menu showing "+last, func() bool {
		_, ok := readMenu(w, g, func(bs []discordgo.Button) bool {
			return slices.ContainsFunc(bs, func(b discordgo.Button) bool { return b.Label == last })
		})
		return ok && !slices.ContainsFunc(ids, func(id string) bool { return !replied(w, id) })
	})
	if err != nil {
		return err
	}
	// A second edit would come after the publish delay (1 s): wait it out.
	time.Sleep(1500 * time.Millisecond)
	res.ConfigCallsByRoute = map[string]int{}
	calls := 0
	for _, r := range w.sim.Requests() {
		if r.Time.Before(since) {
			continue
		}
		calls++
		res.ConfigCallsByRoute[r.Method+" "+r.Route]++
	}
	res.MessageEdits = res.ConfigCallsByRoute[http.MethodPatch+" "+messageEditRoute]
	res.CallsPerConfigChange = float64(calls) / float64(res.ConfigChanges)
	res.MinimumPerConfigChange = float64(res.ConfigChanges+1) / float64(res.ConfigChanges)
	res.NaivePerConfigChange = 2
	return nil
}

// sent is one click: who, which role it adds, when it was sent.
type sent struct {
	id, user, role string
	at             time.Time
}

// change is the path of the role change the click asks for in guild.
func (c sent) change(guild string) string {
	return fmt.Sprintf("/guilds/%s/members/%s/roles/%s", guild, c.user, c.role)
}

// click has every member click the first option, then every member the
// second, at ClickRate, and waits until each
// click's role is applied and its reply settled.
func (res *RoleMenuResult) click(w *world, g sim.FixtureResult, m publishedMenu) error {
	since := time.Now()
	var clicks []sent
	start := time.Now()
	for opt, customID := range m.buttons {
		for _, member := range g.Members[1 : res.Members+1] {
			// Paced by the schedule, so a slow send catches up.
			time.Sleep(time.Until(start.Add(time.Duration(len(clicks)) * time.Second / time.Duration(res.ClickRate))))
			at := time.Now()
			in, err := w.sim.Interact(sim.InteractionRequest{GuildID: g.ID, ChannelID: m.channelID, UserID: member.ID,
				Kind: "component", CustomID: customID, MessageID: m.messageID})
			if err != nil {
				return err
			}
			clicks = append(clicks, sent{id: in.ID, user: member.ID, role: g.Roles[opt].ID, at: at})
		}
	}
	res.Clicks = len(clicks)
	window := time.Duration(float64(memberRoleWindow) * res.TimeScale)
	arrivals := make([]time.Time, len(clicks))
	for i, c := range clicks {
		arrivals[i] = c.at
	}
	minimum := earliest(arrivals, memberRoleLimit, window)
	// Generous: three times what the bucket needs, plus a second for the
	// jobs to start.
	deadline := 3*(minimum[len(minimum)-1]+clicks[len(clicks)-1].at.Sub(clicks[0].at)) + 10*time.Second
	applied := map[string]time.Time{}
	settled := func() bool {
		for _, r := range w.sim.Requests() {
			if r.Time.After(since) && r.Method == http.MethodPut && r.Route == memberRoleRoute && r.Status == http.StatusNoContent {
				if _, seen := applied[r.Path]; !seen {
					applied[r.Path] = r.Time
				}
			}
		}
		// A click Discord did not see answered in its window did nothing
		// (the member saw it fail): it is counted as a miss (Acked below).
		// One not answered yet is waited for until its window is over.
		for _, c := range clicks {
			if st, _ := w.sim.Interaction(c.id); !st.Acked {
				if time.Since(c.at) < answerBy(res.TimeScale) {
					return false
				}
				continue
			}
			if _, ok := applied[c.change(g.ID)]; !ok {
				return false
			}
			if !replied(w, c.id) && !res.expired(w, c) {
				return false
			}
		}
		return true
	}
	if err := until(deadline, "every acknowledged click applied and answered", settled); err != nil {
		answered, acked := 0, 0
		for _, c := range clicks {
			if replied(w, c.id) {
				answered++
			}
			if st, _ := w.sim.Interaction(c.id); st.Acked {
				acked++
			}
		}
		return fmt.Errorf("%w: %d of %d clicks applied, %d acked, %d answered", err, len(applied), len(clicks), acked, answered)
	}
	var got []float64
	for _, c := range clicks {
		if st, _ := w.sim.Interaction(c.id); st.Acked && st.AckLatencyMS != nil && *st.AckLatencyMS <= 3000*res.TimeScale {
			res.Acked++
		}
		if at, ok := applied[c.change(g.ID)]; ok {
			res.Applied++
			got = append(got, ms(at.Sub(c.at)))
		}
		if res.expired(w, c) {
			res.RepliesLost++
		}
		if at, ok := applied[c.change(g.ID)]; ok && replied(w, c.id) && at.Sub(c.at) > res.tokenLife() {
			res.RepliesNoticed++
		}
	}
	v := againstLeast(got, minimum, len(clicks))
	res.AppliedP50MS, res.AppliedP99MS, res.MinimumP50MS, res.MinimumP99MS, res.RatioP50, res.RatioP99 = v.p50, v.p99, v.least50, v.least99, v.ratio50, v.ratio99
	res.ClickCallsByRoute = map[string]int{}
	calls := 0
	made := map[string]bool{}
	for _, r := range w.sim.Requests() {
		if r.Time.Before(since) {
			continue
		}
		calls++
		res.ClickCallsByRoute[r.Method+" "+r.Route]++
		if r.Status == http.StatusTooManyRequests {
			res.RateLimited++
		}
		if r.Method == http.MethodPut && r.Route == memberRoleRoute {
			res.ExtraRoleCalls++
			if r.Status == http.StatusNoContent && !made[r.Path] {
				made[r.Path] = true
				res.ExtraRoleCalls--
			}
		}
	}
	res.CallsPerClick = float64(calls) / float64(len(clicks))
	return nil
}

// tokenLife is how long an interaction's token lets herald edit its
// reply, on the simulator's clock.
func (res *RoleMenuResult) tokenLife() time.Duration {
	return time.Duration(float64(work.TokenLife) * res.TimeScale)
}

// expired reports whether the click has no reply and can no longer get
// one: its token ran out while its change waited for the bucket.
func (res *RoleMenuResult) expired(w *world, c sent) bool {
	return !replied(w, c.id) && time.Since(c.at) > res.tokenLife()
}

// earliest is, for clicks sent at arrivals (in order), the least time
// from each click to its role change under a fixed window of limit
// changes that opens with its first request: each change goes, in click
// order, the moment its click arrives or when the full window ends.
func earliest(arrivals []time.Time, limit int, window time.Duration) []time.Duration {
	out := make([]time.Duration, len(arrivals))
	var opened, last time.Time
	used := 0
	for i, a := range arrivals {
		at := a
		if at.Before(last) {
			at = last
		}
		switch {
		case opened.IsZero() || !at.Before(opened.Add(window)):
			opened, used = at, 0
		case used == limit:
			at = opened.Add(window)
			opened, used = at, 0
		}
		used++
		last = at
		out[i] = at.Sub(a)
	}
	return out
}

// versusLeast is latencies' p50 and p99 beside those of the least each
// could have taken, and their ratios.
type versusLeast struct{ p50, p99, least50, least99, ratio50, ratio99 float64 }

// againstLeast ranks got, the latencies (ms) observed of n tries, beside
// minimum, the least each try could have taken; a try never observed
// counts as slower than all.
func againstLeast(got []float64, minimum []time.Duration, n int) versusLeast {
	least := make([]float64, 0, len(minimum))
	for _, d := range minimum {
		least = append(least, ms(d))
	}
	slices.Sort(got)
	slices.Sort(least)
	inf := math.Inf(1)
	v := versusLeast{p50: rank(got, 50, n, inf), p99: rank(got, 99, n, inf), least50: rank(least, 50, n, inf), least99: rank(least, 99, n, inf)}
	v.ratio50, v.ratio99 = v.p50/v.least50, v.p99/v.least99
	return v
}

// rank is the p-th percentile of n values of which sorted are the ones
// observed; the rest count as missing, slower than any observed.
func rank(sorted []float64, p float64, n int, missing float64) float64 {
	if n == 0 {
		return 0
	}
	i := max(int(float64(n)*p/100+0.5)-1, 0)
	if i >= len(sorted) {
		return missing
	}
	return sorted[i]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// until polls cond every 20 ms for at most d.
func until(d time.Duration, what string, cond func() bool) error {
	return untilEvery(d, 20*time.Millisecond, what, cond)
}

// untilEvery polls cond every poll for at most d.
func untilEvery(d, poll time.Duration, what string, cond func() bool) error {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("waited %s for %s", d, strings.TrimSpace(what))
		}
		time.Sleep(poll)
	}
	return nil
}
