package status_test

import (
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/heraldtest"
	"github.com/herald-bot/herald/internal/testsupport/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// /herald jobs end to end: gateway event in the simulator → fast ACK
// (deferred, ephemeral) → River job → follow-up observed in the
// simulator, counting only the calling guild's work, with the token kept
// out of the job's args; a second report within the cooldown and a member
// without Manage Server are refused, and nothing more is enqueued.
func TestJobsReport(t *testing.T) {
	t.Parallel()
	f := sim.DefaultFixture()
	f.Roles = append(f.Roles, sim.FixtureRole{Name: "Admin", Permissions: "32", Position: 11})
	f.Members = append(f.Members, sim.FixtureMember{Username: "erin", Roles: []string{"Admin"}})
	h := heraldtest.New(t, heraldtest.WithFixture(f))
	// Another guild's work must not show in this guild's report.
	if _, err := h.DB.Exec(t.Context(), `INSERT INTO river_job (args, kind, max_attempts, queue, state, metadata)
		VALUES ('{}', 'other_guild_work', 25, 'events', 'available', '{"guild_id": "1"}')`); err != nil {
		t.Fatal(err)
	}

	admin := h.As("erin").Locale("de").Command("general", "/herald/jobs", nil)
	if st := admin.Ack(); st.AckType != int(discordgo.InteractionResponseDeferredChannelMessageWithSource) {
		t.Errorf("ack type = %d, want deferred", st.AckType)
	}
	report := admin.Reply() // the first follow-up fills the deferred message
	if !strings.Contains(report.Content, "0 in der Warteschlange, 1 laufen") || report.Flags&discordgo.MessageFlagsEphemeral == 0 {
		t.Errorf("report = %q (flags %d), want the German summary counting only its own job, running, ephemeral", report.Content, report.Flags)
	}

	var leaked int
	h.DB.QueryRow(t.Context(), `SELECT count(*) FROM river_job WHERE args::text LIKE '%' || $1 || '%'`, admin.Token).Scan(&leaked)
	if leaked != 0 {
		t.Error("the interaction's token is in a job's args")
	}
	again := h.As("erin").Command("general", "/herald/jobs", nil)
	if m := again.Reply(); !strings.Contains(m.Content, "You can do this again in") {
		t.Errorf("a second report within the cooldown answered %q", m.Content)
	}

	refused := h.As("bob").Command("general", "/herald/jobs", nil)
	if m := refused.Reply(); !strings.Contains(m.Content, "Manage Server") {
		t.Errorf("refusal = %q", m.Content)
	}
	var jobs int
	h.DB.QueryRow(t.Context(), `SELECT count(*) FROM river_job WHERE kind = 'status_jobs_report'`).Scan(&jobs)
	if jobs != 1 {
		t.Errorf("%d report jobs, want only the admin's", jobs)
	}
}
