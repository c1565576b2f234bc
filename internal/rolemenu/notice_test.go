package rolemenu_test

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/heraldtest"
	"github.com/herald-bot/herald/internal/interaction"
	"github.com/herald-bot/herald/internal/work"
)

// A rush of clicks whose last changes come after their replies close:
// with a token life of 18 s and a member-role bucket of one change in
// 2.5 s, the tenth member's role changes about 22 s after the clicks.
// (At 6 s and one a second herald's margins — its notice runs, its
// token-life reserve of a minute, scaled — were a few hundred ms, which
// a loaded machine can take.)
// Every member gets the role; every reply is filled while its token
// lives — with the result, or with a notice saying when the change comes;
// nothing is sent to an interaction after its token's life; results
// replaced by a notice are counted, none lost without one;
// /rolemenu status shows the members told; and no member is read.
func TestLateChangeIsAnnounced(t *testing.T) {
	t.Parallel()
	const members, life = 10, 18 * time.Second
	f := fixture()
	for i := range members {
		f.Members = append(f.Members, sim.FixtureMember{Username: fmt.Sprintf("rush%d", i)})
	}
	h := heraldtest.New(t, heraldtest.WithFixture(f), heraldtest.WithEnv(map[string]string{
		// Discord's clocks 50 times faster: a token lives 18 s. The
		// simulator keeps its own time; herald's 18 s is what is tested.
		"HERALD_DISCORD_TIME_SCALE": strconv.FormatFloat(life.Seconds()/work.TokenLife.Seconds(), 'f', -1, 64)}))
	admin := h.As("admin")
	admin.Command("general", "/rolemenu/create", heraldtest.Opts{"name": "rush"}).Reply()
	admin.Command("general", "/rolemenu/option/add", heraldtest.Opts{"menu": "rush", "role": h.Role("Red")}).Reply()
	admin.Command("general", "/rolemenu/publish", heraldtest.Opts{"menu": "rush", "channel": h.Channel("roles")}).Reply()
	msg := menuMessage(t, h, "roles", "rush", func(m *discordgo.Message) bool { return len(interaction.Buttons(m)) == 1 })
	h.Sim.SetLimits(sim.LimitChange{Route: "PUT /guilds/{guild_id}/members/{user_id}/roles/{role_id}", Limit: 1, WindowMS: 2500})

	clicks := make([]heraldtest.Sent, members)
	for i := range clicks {
		clicks[i] = h.As(fmt.Sprintf("rush%d", i)).Click(msg, heraldtest.Button(t, msg, "Red"))
	}
	told := func(c heraldtest.Sent) bool {
		content, _ := h.Sim.Interaction(c.ID).Original["content"].(string)
		return strings.Contains(content, "queued and should change <t:")
	}
	h.Eventually("a member told when their change comes", func() bool { return slices.ContainsFunc(clicks, told) })
	if s := admin.Command("general", "/rolemenu/status", nil).Reply(); !strings.Contains(s.Content, "was told when to expect it") {
		t.Errorf("/rolemenu status while members wait: %q", s.Content)
	}
	h.Eventually("every member has Red", func() bool {
		for i := range members {
			if !hasRole(h, fmt.Sprintf("rush%d", i), "Red") {
				return false
			}
		}
		return true
	})
	h.Eventually("the late results counted", func() bool {
		return strings.Contains(h.Metrics(), `herald_rolemenu_late_replies_total{notice="given"}`)
	})
	if m := h.Metrics(); strings.Contains(m, `herald_rolemenu_late_replies_total{notice="none"}`) {
		t.Errorf("a late result dropped without notice:\n%s", m)
	}

	reqs := h.Sim.Server.Requests()
	created := map[string]time.Time{} // each click's token path, and when Discord created it
	late := 0
	for i, c := range clicks {
		at, err := discordgo.SnowflakeTimestamp(c.ID)
		if err != nil {
			t.Fatal(err)
		}
		created["/webhooks/"+h.Guild.ApplicationID+"/"+c.Token] = at
		change := "/guilds/" + h.Guild.ID + "/members/" + h.Member(fmt.Sprintf("rush%d", i)) + "/roles/" + h.Role("Red")
		k := slices.IndexFunc(reqs, func(r sim.RequestRecord) bool { return r.Path == change && r.Status == http.StatusNoContent })
		switch content, _ := c.Ack().Original["content"].(string); {
		case k < 0:
			t.Errorf("rush%d's change is not in the simulator's log", i)
		case reqs[k].Time.Sub(at) > life:
			late++
			if !told(c) {
				t.Errorf("rush%d's change came %s after the click, and the reply says %q", i, reqs[k].Time.Sub(at).Round(time.Millisecond), content)
			}
		case content == "":
			t.Errorf("rush%d: no reply", i)
		}
	}
	if late == 0 {
		t.Error("no change came after its token's life: the test shows nothing")
	}
	for _, r := range reqs {
		// The apply jobs waited on the bucket (snoozed with their change
		// unsent) and still never read a member: the payloads and the
		// unsent changes said everything.
		if r.Method == http.MethodGet && r.Route == "/guilds/{guild_id}/members/{user_id}" && !strings.HasSuffix(r.Path, "/"+h.Guild.BotUserID) {
			t.Errorf("GET %s: a member read the click's payload answers", r.Path)
		}
		for path, at := range created {
			if strings.HasPrefix(r.Path, path) && r.Method != http.MethodGet && r.Time.Sub(at) > life {
				t.Errorf("%s %s %s after the click: past herald's token life", r.Method, r.Route, r.Time.Sub(at).Round(time.Millisecond))
			}
		}
	}
}

// A click whose answer missed Discord's 3 s has no token to reply with:
// its role changes all the same, the lost reply is counted, and the
// member's next click is carried out as usual — Discord's refusal of the
// token does not hold up the member's queue.
func TestMissedAnswerLosesOnlyTheReply(t *testing.T) {
	t.Parallel()
	h := heraldtest.New(t, heraldtest.WithFixture(fixture()))
	admin := h.As("admin")
	admin.Command("general", "/rolemenu/create", heraldtest.Opts{"name": "missed"}).Reply()
	for _, r := range []string{"Red", "Blue"} {
		admin.Command("general", "/rolemenu/option/add", heraldtest.Opts{"menu": "missed", "role": h.Role(r)}).Reply()
	}
	admin.Command("general", "/rolemenu/publish", heraldtest.Opts{"menu": "missed", "channel": h.Channel("roles")}).Reply()
	msg := menuMessage(t, h, "roles", "missed", func(m *discordgo.Message) bool { return len(interaction.Buttons(m)) == 2 })

	const callback = "POST /interactions/{interaction_id}/{interaction_token}/callback"
	h.Sim.SetFault(sim.Fault{Route: callback, LatencyMS: 3500})
	missed := h.As("bob").Click(msg, heraldtest.Button(t, msg, "Red"))
	h.Eventually("bob has Red", func() bool { return hasRole(h, "bob", "Red") })
	h.Eventually("the lost reply counted", func() bool {
		return strings.Contains(h.Metrics(), `herald_rolemenu_late_replies_total{notice="none"} 1`)
	})
	if st := h.Sim.Interaction(missed.ID); st.Acked {
		t.Fatal("the slow answer reached Discord: the test needs it missed")
	}
	h.Sim.SetFault(sim.Fault{Route: callback, Clear: true})
	reply := h.As("bob").Click(msg, heraldtest.Button(t, msg, "Blue")).Reply()
	h.Eventually("bob has Blue", func() bool { return hasRole(h, "bob", "Blue") })
	if !strings.Contains(reply.Content, h.Role("Blue")) {
		t.Errorf("reply to the next click: %q, want it to name Blue", reply.Content)
	}
	var cancelled int
	if err := h.DB.QueryRow(t.Context(), `SELECT count(*) FROM river_job WHERE kind = 'rolemenu_apply' AND state = 'cancelled'`).Scan(&cancelled); err != nil || cancelled != 0 {
		t.Errorf("%d apply jobs cancelled (%v), want none: a lost reply is not a failure", cancelled, err)
	}
}
