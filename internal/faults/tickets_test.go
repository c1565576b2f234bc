package faults_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/discord/simtest"
	"github.com/herald-bot/herald/internal/store/storetest"
	"github.com/herald-bot/herald/internal/testsupport/logbuf"
	"github.com/herald-bot/herald/internal/testsupport/wait"
)

// ticketKills is how many times each ticket test kills herald.
var ticketKills = envInt("HERALD_FAULT_TICKET_KILLS", 6)

// kill -9 of a real herald process while members open tickets (each
// clicking the panel twice) and staff close the tickets opened before,
// at a seeded random point after each batch's answers, and a restart
// after each. Every acknowledged open yields exactly one thread or
// channel and one welcome; every close exactly one closing message, one
// transcript upload, and the thread archived or the channel deleted by
// exactly one request.
func TestKill9Tickets(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"thread", "channel"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			killTickets(t, faultRand(t), mode)
		})
	}
}

func killTickets(t *testing.T, rng *rand.Rand, mode string) {
	s := crashSim(t)
	// The test is about crashes, not rate limits.
	s.SetLimits(sim.LimitChange{Global: 1000})
	for _, route := range []string{"POST /channels/{channel_id}/threads", "PUT /channels/{channel_id}/thread-members/{user_id}",
		"POST /channels/{channel_id}/messages", "PATCH /channels/{channel_id}/messages/{message_id}", "GET /channels/{channel_id}/messages",
		"GET /channels/{channel_id}", "PATCH /channels/{channel_id}", "DELETE /channels/{channel_id}", "POST /users/@me/channels",
		"GET /guilds/{guild_id}/threads/active", "GET /guilds/{guild_id}/channels", "POST /guilds/{guild_id}/channels"} {
		s.SetLimits(sim.LimitChange{Route: route, Limit: 1000, WindowMS: 1000})
	}
	f := sim.DefaultFixture()
	f.Roles = append(f.Roles, sim.FixtureRole{Name: "Helpers", Permissions: "0", Position: 6})
	f.Channels = append(f.Channels, sim.FixtureChannel{Name: "help", Type: 0}, sim.FixtureChannel{Name: "ticket-log", Type: 0})
	f.Members = append(f.Members, sim.FixtureMember{Username: "sam", Roles: []string{"Helpers"}})
	var members []string
	for i := range 4 * ticketKills {
		name := fmt.Sprintf("member%02d", i)
		f.Members = append(f.Members, sim.FixtureMember{Username: name})
		members = append(members, name)
	}
	g := s.CreateGuild(f)
	dbURL := storetest.URL(t)
	env := childEnvFor(s, dbURL)
	var logs logbuf.Buffer
	defer func() {
		if t.Failed() {
			t.Logf("herald's errors:\n%s", logs.String())
		}
	}()
	db, err := pgxpool.New(t.Context(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	herald := start(t, env, &logs)
	defer func() {
		if herald != nil {
			herald.Process.Signal(syscall.SIGTERM)
			herald.Wait()
		}
	}()
	d := &desk{t: t, s: s, g: g, db: db}
	d.command("Tickets are set up", "tickets", "setup", map[string]any{"support-role": g.Role("Helpers"), "mode": mode,
		"log-channel": g.Channel("ticket-log")}, "owner", g.Channel("general"))
	d.command("Publishing panel", "tickets", "panel", map[string]any{"channel": g.Channel("help")}, "owner", g.Channel("general"))
	d.findPanel()

	var points []time.Duration
	per := len(members) / ticketKills
	for i := 0; i < len(members); i += per {
		if herald == nil {
			herald = start(t, env, &logs)
		}
		sent := d.closeOpen(false)
		for _, m := range members[i : i+per] {
			sent = append(sent, d.open(m), d.open(m))
		}
		wait.Until(t, "herald's answers to a batch", func() bool {
			return !slices.ContainsFunc(sent, func(id string) bool { return !settled(s, id) })
		})
		at := time.Duration(rng.IntN(300)) * time.Millisecond
		points = append(points, at)
		time.Sleep(at)
		herald.Process.Signal(syscall.SIGKILL)
		herald.Wait()
		herald = nil
	}
	herald = start(t, env, &logs)
	// Opens killed before their answer, and closes lost with them, are
	// done again once herald runs steadily.
	wait.Within(t, drainTimeout, "every ticket opened", func() bool {
		var n int
		return db.QueryRow(t.Context(), `SELECT count(*) FROM tickets WHERE status = 'opening'`).Scan(&n) == nil && n == 0
	})
	wait.Within(t, drainTimeout, "every ticket closed", func() bool {
		d.closeOpen(true)
		var n int
		return db.QueryRow(t.Context(), `SELECT count(*) FROM tickets WHERE status <> 'closed'`).Scan(&n) == nil && n == 0
	})
	for _, kind := range []string{"tickets_open", "tickets_close"} {
		jobsDrained(t, db, kind)
	}
	r := d.check(mode)
	t.Logf("load: %d members opening tickets (double clicks: the second click's refusal counts as busy) and staff closing them in %s mode; faults: %d kill -9 at %v after each batch's answers; requests to Discord: %d; %s",
		len(members), mode, len(points), points, len(s.Server.Requests()), r)
	for _, p := range r.problems {
		t.Error(p)
	}
	if r.acked == 0 {
		t.Error("no open was acknowledged")
	}
}

// desk drives the tickets of one guild as its members and staff do.
type desk struct {
	t      *testing.T
	s      *simtest.Sim
	g      sim.FixtureResult
	db     *pgxpool.Pool
	panel  *discordgo.Message
	openBy map[string][]string // member → their open clicks
}

// command runs /<name> <sub> as username in channelID and waits for a
// reply containing want.
func (d *desk) command(want, name, sub string, opts map[string]any, username, channelID string) {
	d.t.Helper()
	in := d.interact(name, sub, opts, username, channelID)
	var reply string
	wait.Until(d.t, "the reply to /"+name+" "+sub, func() bool {
		reply, _ = d.s.Interaction(in).Original["content"].(string)
		return reply != ""
	})
	if !strings.Contains(reply, want) {
		d.t.Fatalf("/%s %s: %q, want %q", name, sub, reply, want)
	}
}

func (d *desk) interact(name, sub string, opts map[string]any, username, channelID string) string {
	types := map[string]discordgo.ApplicationCommandOptionType{"support-role": discordgo.ApplicationCommandOptionRole,
		"log-channel": discordgo.ApplicationCommandOptionChannel, "channel": discordgo.ApplicationCommandOptionChannel}
	var leaf []any
	for k, v := range opts {
		typ, ok := types[k]
		if !ok {
			typ = discordgo.ApplicationCommandOptionString
		}
		leaf = append(leaf, map[string]any{"type": int(typ), "name": k, "value": v})
	}
	return d.s.Interact(sim.InteractionRequest{GuildID: d.g.ID, ChannelID: channelID, UserID: d.g.Member(username), Kind: "command",
		Name: name, Options: []any{map[string]any{"type": int(discordgo.ApplicationCommandOptionSubCommand), "name": sub, "options": leaf}}}).ID
}

func (d *desk) findPanel() {
	wait.Until(d.t, "the panel in #help", func() bool {
		msgs := d.s.Messages(d.g.Channel("help"))
		if len(msgs) == 1 && len(msgs[0].Components) == 1 {
			d.panel = msgs[0]
		}
		return d.panel != nil
	})
}

// open clicks the panel's button as username.
func (d *desk) open(username string) string {
	b := d.panel.Components[0].(*discordgo.ActionsRow).Components[0].(*discordgo.Button)
	id := d.s.Interact(sim.InteractionRequest{GuildID: d.g.ID, ChannelID: d.panel.ChannelID, UserID: d.g.Member(username),
		Kind: "component", CustomID: b.CustomID, MessageID: d.panel.ID}).ID
	if d.openBy == nil {
		d.openBy = map[string][]string{}
	}
	d.openBy[username] = append(d.openBy[username], id)
	return id
}

// closeOpen has staff run /ticket close in every open ticket, or with
// settle only in those whose close is not recorded yet. It returns the
// interactions.
func (d *desk) closeOpen(settle bool) []string {
	rows, err := d.db.Query(context.Background(), `SELECT channel_id FROM tickets WHERE status = 'open' AND channel_id IS NOT NULL`)
	if err != nil {
		d.t.Fatal(err)
	}
	var out []string
	for rows.Next() {
		var ch string
		rows.Scan(&ch)
		out = append(out, d.interact("ticket", "close", nil, "sam", ch))
	}
	if err := rows.Err(); err != nil {
		d.t.Fatal(err)
	}
	if settle {
		// A close herald answered is recorded (the ticket is closing), so
		// the next round does not ask again.
		wait.Until(d.t, "herald's answers to the closes", func() bool {
			return !slices.ContainsFunc(out, func(id string) bool { return !settled(d.s, id) })
		})
	}
	return out
}

// closedBy is in every closing message: the answer to a close from inside
// the ticket, or the close job's post.
const closedBy = "closed by <@"

// check holds every ticket to what the simulator saw. Postgres stays up
// in these tests: no answer may be "unconfirmed".
func (d *desk) check(mode string) tally {
	ok := map[string]int{} // successful requests by method and path
	for _, r := range d.s.Server.Requests() {
		if r.Status < 300 {
			ok[r.Method+" "+r.Path]++
		}
	}
	var r tally
	problem := func(format string, args ...any) { r.problems = append(r.problems, fmt.Sprintf(format, args...)) }
	rows, err := d.db.Query(context.Background(), `SELECT t.number, t.opener_id, t.interaction_id, COALESCE(t.channel_id, ''), t.status,
		COALESCE(tr.plain, ''), (SELECT count(*) FROM river_job j WHERE j.kind = 'tickets_open' AND (j.args->>'ticket_id')::bigint = t.id)
		FROM tickets t LEFT JOIN ticket_transcripts tr ON tr.ticket_id = t.id ORDER BY t.number`)
	if err != nil {
		d.t.Fatal(err)
	}
	type row struct {
		number                      int
		opener, interaction, ch, st string
		plain                       string
		jobs                        int
	}
	byInteraction := map[string]row{}
	channels := map[string]bool{}
	for rows.Next() {
		var x row
		if err := rows.Scan(&x.number, &x.opener, &x.interaction, &x.ch, &x.st, &x.plain, &x.jobs); err != nil {
			d.t.Fatal(err)
		}
		byInteraction[x.interaction] = x
		name := fmt.Sprintf("ticket-%04d", x.number)
		upload := fmt.Sprintf("Transcript of ticket #%d (", x.number)
		switch {
		case x.st != "closed":
			problem("ticket #%d is %s", x.number, x.st)
		case strings.Count(x.plain, closedBy) != 1 || strings.Count(x.plain, fmt.Sprintf("opened ticket #%d.", x.number)) != 1:
			r.duplicated++
			problem("ticket #%d: transcript with %d closing messages and %d welcomes", x.number,
				strings.Count(x.plain, closedBy), strings.Count(x.plain, fmt.Sprintf("opened ticket #%d.", x.number)))
		}
		if n := countContent(d.s.Messages(d.g.Channel("ticket-log")), upload); n != 1 {
			problem("ticket #%d: %d transcript uploads", x.number, n)
		}
		if mode == "thread" {
			channels[name] = true
			if n := ok["PATCH /channels/"+x.ch]; n != 1 {
				problem("ticket #%d: its thread archived by %d requests", x.number, n)
			}
			if n := countContent(d.s.Messages(d.g.Channel("ticket-log")), fmt.Sprintf("opened ticket #%d:", x.number)); n != 1 {
				problem("ticket #%d: %d staff notifications", x.number, n)
			}
		}
	}
	if err := rows.Err(); err != nil {
		d.t.Fatal(err)
	}
	// Every thread or channel made is one ticket's.
	made := 0
	if mode == "thread" {
		for _, th := range d.s.Guild(d.g.ID).Threads {
			made++
			if !channels[th.Name] || !th.Archived || !th.Locked {
				problem("thread %s (%s): a ticket's: %v, archived %v, locked %v", th.ID, th.Name, channels[th.Name], th.Archived, th.Locked)
			}
		}
		made = max(made, ok["POST /channels/"+d.g.Channel("help")+"/threads"])
	} else {
		made = ok["POST /guilds/"+d.g.ID+"/channels"]
		// A closed ticket forgets its deleted channel: every channel
		// deleted was deleted by one request, one channel per ticket.
		deleted := 0
		for call, n := range ok {
			if strings.HasPrefix(call, "DELETE /channels/") {
				deleted++
				if n != 1 {
					problem("%s: %d requests", call, n)
				}
			}
		}
		if deleted != len(byInteraction) {
			problem("%d channels deleted for %d tickets", deleted, len(byInteraction))
		}
	}
	if made != len(byInteraction) {
		r.duplicated++
		problem("%d %ss made for %d tickets", made, mode, len(byInteraction))
	}
	for member, clicks := range d.openBy {
		tickets := 0
		for _, id := range clicks {
			r.interactions++
			st := d.s.Interaction(id)
			if st.AckLatencyMS != nil {
				r.slowestAckMS = max(r.slowestAckMS, *st.AckLatencyMS)
			}
			_, recorded := byInteraction[id]
			if recorded {
				tickets++
			}
			switch r.classify(d.t, id, st, outage{}) {
			case "acked":
				reply, _ := st.Original["content"].(string)
				// A ticket closed before a killed attempt's reply says so.
				if !recorded || !strings.Contains(reply, "is open: <#") && !strings.Contains(reply, "has been closed since") {
					r.lost++
					problem("%s's open %s acknowledged: recorded %v, reply %q", member, id, recorded, reply)
				}
			case "other": // the second click of a double click, refused
				r.busy++
				fallthrough
			case "busy":
				if recorded {
					problem("%s's open %s answered %q but recorded", member, id, st.Original["content"])
				}
			}
		}
		if tickets > 1 {
			r.duplicated++
			problem("%s has %d tickets", member, tickets)
		}
	}
	return r
}

func countContent(msgs []*discordgo.Message, text string) int {
	n := 0
	for _, m := range msgs {
		if strings.Contains(m.Content, text) {
			n++
		}
	}
	return n
}
