package status

import (
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/herald-bot/herald/internal/config"
	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/discord/simtest"
	"github.com/herald-bot/herald/internal/discord/transport"
	"github.com/herald-bot/herald/internal/followup"
	"github.com/herald-bot/herald/internal/gateway"
	"github.com/herald-bot/herald/internal/i18n"
	"github.com/herald-bot/herald/internal/store/storetest"
	"github.com/herald-bot/herald/internal/testsupport/pgtest"
	"github.com/herald-bot/herald/internal/work"
	"github.com/herald-bot/herald/locales"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func eventually(t *testing.T, what string, f func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !f() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// /herald jobs end to end: gateway event in the simulator → fast ACK
// (deferred, ephemeral) → River job → follow-up observed in the
// simulator; a member without Manage Server is refused and nothing is
// enqueued.
func TestJobsReport(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t)
	s := simtest.New(t)
	f := sim.DefaultFixture()
	f.Roles = append(f.Roles, sim.FixtureRole{Name: "Admin", Permissions: "32", Position: 11})
	f.Members = append(f.Members, sim.FixtureMember{Username: "erin", Roles: []string{"Admin"}})
	g := s.CreateGuild(f)

	catalog, err := i18n.New(locales.FS)
	if err != nil {
		t.Fatal(err)
	}
	engine := transport.New(transport.Config{ApplicationID: s.BotUserID()})
	sender := followup.NewSender(pool, engine, s.URL+"/api/v10", s.BotUserID(), followup.Budget{Max: 3}, prometheus.NewRegistry())
	router, reg := gateway.NewRouter(), work.NewRegistry()
	Register(router, reg, Deps{DB: pool, Followups: sender, Catalog: catalog})
	jobs, err := work.NewClient(pool, work.Options{Registry: reg, Lanes: config.LaneWorkers{Interactive: 2, Events: 1, Sync: 1, Background: 1},
		ShutdownTimeout: time.Second, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if err := jobs.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer work.Stop(jobs, time.Second, time.Second)
	rt, _ := transport.Rewrite(engine.RoundTripper(), s.URL+"/api/v10")
	gw, err := gateway.Open(t.Context(), gateway.Options{Token: simtest.Token, Client: &http.Client{Transport: rt}, Router: router,
		Catalog: catalog, DB: pool, Jobs: jobs, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer gw.Close()
	eventually(t, "ready", func() bool { return gw.Ready() == nil && gw.Guilds() == 1 })

	run := func(user, locale string) sim.InteractionCreated {
		return s.Interact(sim.InteractionRequest{GuildID: g.ID, ChannelID: g.Channel("general"), UserID: g.Member(user),
			Kind: "command", Name: "herald", Options: []any{map[string]any{"type": 1, "name": "jobs"}}, Locale: locale})
	}
	original := func(in sim.InteractionCreated) discordgo.Message {
		var m discordgo.Message
		s.Do("GET", "/webhooks/"+s.BotUserID()+"/"+in.Token+"/messages/@original", nil).JSON(t, &m)
		return m
	}

	admin := run("erin", "de")
	eventually(t, "follow-up", func() bool { return s.Interaction(admin.ID).Followups == 1 })
	if st := s.Interaction(admin.ID); st.AckType != int(discordgo.InteractionResponseDeferredChannelMessageWithSource) {
		t.Errorf("ack type = %d, want deferred", st.AckType)
	}
	report := original(admin) // the first follow-up fills the deferred message
	if !strings.Contains(report.Content, "1 laufen") || report.Flags&discordgo.MessageFlagsEphemeral == 0 {
		t.Errorf("report = %q (flags %d), want the German summary counting its own job as running, ephemeral", report.Content, report.Flags)
	}

	refused := run("bob", "en-US")
	eventually(t, "refusal", func() bool { return s.Interaction(refused.ID).Acked })
	if m := original(refused); !strings.Contains(m.Content, "Manage Server") {
		t.Errorf("refusal = %q", m.Content)
	}
	var jobsFor int
	pool.QueryRow(t.Context(), `SELECT count(*) FROM river_job WHERE kind = 'status_jobs_report'`).Scan(&jobsFor)
	if jobsFor != 1 {
		t.Errorf("%d report jobs, want only the admin's", jobsFor)
	}
}
