package faults_test

import (
	"fmt"
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

// menuKills is how many times the role menu test kills herald.
var menuKills = envInt("HERALD_FAULT_MENU_KILLS", 6)

// menuClick is one member's click on one role's button.
type menuClick struct{ member, role, id string }

// kill -9 of a real herald process right after it acknowledged a batch
// of members' clicks on a published role menu — before, while or after
// their apply jobs change roles — and a restart after each: every
// acknowledged click's role is added exactly once (one PUT per member
// and role, never a removal) and its reply names it.
func TestKill9RoleMenuClicks(t *testing.T) {
	t.Parallel()
	rng := faultRand(t)
	s := crashSim(t)
	// The test is about crashes, not rate limits.
	s.SetLimits(sim.LimitChange{Global: 1000})
	for _, route := range []string{"GET /guilds/{guild_id}", "GET /guilds/{guild_id}/members/{user_id}",
		"PUT /guilds/{guild_id}/members/{user_id}/roles/{role_id}"} {
		s.SetLimits(sim.LimitChange{Route: route, Limit: 1000, WindowMS: 1000})
	}
	g := s.CreateGuild(sim.DefaultFixture())
	roles := []string{"News", "Events", "Gaming", "Art"}
	var todo []menuClick
	for i := range 20 {
		m, err := s.Server.AddMember(g.ID, sim.FixtureMember{Username: fmt.Sprintf("member%02d", i)})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range roles {
			todo = append(todo, menuClick{member: m.ID, role: g.Role(r)})
		}
	}
	rng.Shuffle(len(todo), func(i, j int) { todo[i], todo[j] = todo[j], todo[i] })
	dbURL := storetest.URL(t)
	env := childEnvFor(s, dbURL)
	var logs logbuf.Buffer
	defer func() {
		if t.Failed() {
			t.Logf("herald's errors:\n%s", logs.String())
		}
	}()

	herald := start(t, env, &logs)
	defer func() {
		if herald != nil {
			herald.Process.Signal(syscall.SIGTERM)
			herald.Wait()
		}
	}()
	menu, buttons := publishMenu(t, s, g, roles...)
	var points []time.Duration
	per := (len(todo) + menuKills - 1) / menuKills
	for i := 0; i < len(todo); i += per {
		if herald == nil {
			herald = start(t, env, &logs)
		}
		batch := todo[i:min(i+per, len(todo))]
		for j := range batch {
			in, err := s.Server.Interact(sim.InteractionRequest{GuildID: g.ID, ChannelID: menu.ChannelID, UserID: batch[j].member,
				Kind: "component", CustomID: buttons[batch[j].role], MessageID: menu.ID})
			if err != nil {
				t.Fatal(err)
			}
			batch[j].id = in.ID
		}
		wait.Until(t, "herald's answers to a batch of clicks", func() bool {
			return !slices.ContainsFunc(batch, func(c menuClick) bool { return !settled(s, c.id) })
		})
		at := time.Duration(rng.IntN(150)) * time.Millisecond
		points = append(points, at)
		time.Sleep(at)
		herald.Process.Signal(syscall.SIGKILL)
		herald.Wait()
		herald = nil
	}
	herald = start(t, env, &logs)
	db, err := pgxpool.New(t.Context(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// A click reaches its member's apply job through its own job: both
	// drain, a click job killed mid-run after River rescues it.
	jobsDrained(t, db, "rolemenu_click")
	jobsDrained(t, db, "rolemenu_apply")
	wait.Within(t, drainTimeout, "every click worked", func() bool {
		var n int
		return db.QueryRow(t.Context(), `SELECT count(*) FROM rolemenu_clicks`).Scan(&n) == nil && n == 0
	})

	// The database stays up: every answer's write has a known outcome.
	r := checkMenuClicks(t, s, g, todo, outage{})
	t.Logf("load: %d clicks by 20 members on a 4-role menu, %d a batch; faults: %d kill -9 at %v after each batch's answers; requests to Discord: %d; %s",
		len(todo), per, len(points), points, len(s.Server.Requests()), r)
	for _, p := range r.problems {
		t.Error(p)
	}
	if r.acked == 0 {
		t.Error("no click was acknowledged")
	}
}

// checkMenuClicks holds each click to what the simulator saw: an
// acknowledged click's member has the role, added by exactly one
// request, and its reply names the role; a click answered "busy" changed
// nothing; one answered "unconfirmed" (only where fault reaches) or
// unanswered changed its role once or not at all. No role is ever added
// twice or removed.
func checkMenuClicks(t *testing.T, s *simtest.Sim, g sim.FixtureResult, all []menuClick, fault outage) tally {
	t.Helper()
	calls := map[string]int{}
	for _, r := range s.Server.Requests() {
		if r.Route == "/guilds/{guild_id}/members/{user_id}/roles/{role_id}" {
			calls[r.Method+" "+r.Path]++
		}
	}
	has := map[string][]string{}
	for _, m := range s.Guild(g.ID).Members {
		has[m.ID] = m.Roles
	}
	var r tally
	problem := func(format string, args ...any) { r.problems = append(r.problems, fmt.Sprintf(format, args...)) }
	for _, c := range all {
		r.interactions++
		st := s.Interaction(c.id)
		path := "/guilds/" + g.ID + "/members/" + c.member + "/roles/" + c.role
		adds, removes, holds := calls["PUT "+path], calls["DELETE "+path], slices.Contains(has[c.member], c.role)
		if adds > 1 || removes > 0 {
			r.duplicated++
			problem("%s: member %s role %s added %d times, removed %d times", c.id, c.member, c.role, adds, removes)
		}
		if holds != (adds == 1) {
			problem("%s: member %s holds role %s: %v, after %d adds", c.id, c.member, c.role, holds, adds)
		}
		if st.AckLatencyMS != nil {
			r.slowestAckMS = max(r.slowestAckMS, *st.AckLatencyMS)
		}
		switch r.classify(t, c.id, st, fault) {
		case "acked":
			reply, _ := st.Original["content"].(string)
			if adds == 0 || !holds || !strings.Contains(reply, "<@&"+c.role+">") {
				r.lost++
				problem("%s acknowledged: %d adds, holds %v, reply %q", c.id, adds, holds, reply)
			}
		case "busy":
			if adds != 0 {
				problem("%s answered busy but its role was added", c.id)
			}
		case "other":
			problem("%s answered with type %d %q: neither the menu's answer nor a refusal", c.id, st.AckType, st.Original["content"])
		}
	}
	return r
}

// publishMenu sets up, as the guild's owner does with /rolemenu, a menu
// offering roles in #roles, and returns its message and its buttons'
// custom IDs by role id.
func publishMenu(t *testing.T, s *simtest.Sim, g sim.FixtureResult, roles ...string) (*discordgo.Message, map[string]string) {
	t.Helper()
	opt := func(typ discordgo.ApplicationCommandOptionType, name string, v any) any {
		return map[string]any{"type": int(typ), "name": name, "value": v}
	}
	sub := func(name string, opts ...any) map[string]any {
		return map[string]any{"type": int(discordgo.ApplicationCommandOptionSubCommand), "name": name, "options": opts}
	}
	run := func(want string, option map[string]any) {
		t.Helper()
		in := s.Interact(sim.InteractionRequest{GuildID: g.ID, ChannelID: g.Channel("general"), UserID: g.Member("owner"),
			Kind: "command", Name: "rolemenu", Options: []any{option}})
		var reply string
		wait.Until(t, "the reply to /rolemenu "+option["name"].(string), func() bool {
			reply, _ = s.Interaction(in.ID).Original["content"].(string)
			return reply != ""
		})
		if !strings.Contains(reply, want) {
			t.Fatalf("/rolemenu %s: %q, want %q", option["name"], reply, want)
		}
	}
	run("Created", sub("create", opt(discordgo.ApplicationCommandOptionString, "name", "topics")))
	for _, r := range roles {
		run("now offers", map[string]any{"type": int(discordgo.ApplicationCommandOptionSubCommandGroup), "name": "option", "options": []any{
			sub("add", opt(discordgo.ApplicationCommandOptionString, "menu", "topics"), opt(discordgo.ApplicationCommandOptionRole, "role", g.Role(r))),
		}})
	}
	run("Publishing", sub("publish", opt(discordgo.ApplicationCommandOptionString, "menu", "topics"),
		opt(discordgo.ApplicationCommandOptionChannel, "channel", g.Channel("roles"))))

	var menu *discordgo.Message
	buttons := map[string]string{}
	wait.Until(t, "the menu in #roles", func() bool {
		for _, m := range s.Messages(g.Channel("roles")) {
			for _, row := range m.Components {
				for _, c := range row.(*discordgo.ActionsRow).Components {
					b := c.(*discordgo.Button)
					buttons[g.Role(b.Label)] = b.CustomID
				}
			}
			menu = m
		}
		return len(buttons) == len(roles)
	})
	return menu, buttons
}
