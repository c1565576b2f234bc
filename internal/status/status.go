// Package status is herald's admin view of its own work, for members who
// may manage the server: /herald jobs counts the server's work queued,
// running, waiting for Discord and failed; /herald status shows it per
// lane, every waiting group with its reason and until when, every failure
// with the fix, the features' objects not yet as saved, and what holds
// the REST engine back.
package status

import (
	"context"
	"fmt"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/herald-bot/herald/commands"
	"github.com/herald-bot/herald/internal/config"
	"github.com/herald-bot/herald/internal/feature"
	"github.com/herald-bot/herald/internal/followup"
	"github.com/herald-bot/herald/internal/i18n"
	"github.com/herald-bot/herald/internal/interaction"
	"github.com/herald-bot/herald/internal/work"
)

// Feature declares the admin status feature.
func Feature() feature.Feature {
	return feature.Feature{Name: "status", Commands: commands.Herald, Settings: []config.Var{boardInterval}, Build: build,
		// The /herald board message.
		Permissions: discordgo.PermissionViewChannel | discordgo.PermissionSendMessages}
}

func build(k feature.Kit) error {
	k.Routes.Route("/herald", func(r *interaction.Mux) {
		r.Use(interaction.GuildOnly, interaction.RequirePermission(discordgo.PermissionManageGuild), interaction.Cooldown(cooldown))
		r.Command("/jobs", jobs)
		r.Command("/status", statusCommand)
		r.Command("/board", board)
	})
	work.Register(k.Jobs, &reportWorker{db: k.DB, followups: k.Followups, catalog: k.Catalog})
	sum := summary{db: k.DB, reports: k.Reports, health: k.Health, missing: k.Missing}
	work.Register(k.Jobs, &statusWorker{summary: sum, followups: k.Followups, catalog: k.Catalog})
	work.Register(k.Jobs, &boardWorker{summary: sum, discord: k.Discord, catalog: k.Catalog, interval: k.Config.Var(boardInterval.Key).(time.Duration)})
	return nil
}

// reportArgs is the job /herald jobs enqueues: a view, useless once the
// interaction's token has expired. The token itself stays in the ledger.
type reportArgs struct {
	work.View
	GuildID       string `json:"guild_id"`
	InteractionID string `json:"interaction_id"`
	Locale        string `json:"locale"`
	GuildLocale   string `json:"guild_locale"`
}

func (reportArgs) Kind() string { return "status_jobs_report" }

// cooldown is how often one admin may ask for a report: each counts the
// guild's jobs in Postgres.
const cooldown = 10 * time.Second

// jobs is the fast path of /herald jobs: enqueue the report, answer
// deferred and ephemeral.
func jobs(ctx context.Context, in *interaction.Interaction) (*discordgo.InteractionResponse, error) {
	userLocale, guildLocale := in.Locales()
	err := in.Enqueue(ctx, work.IntentView, river.InsertManyParams{
		Args: reportArgs{View: work.ReplyView(in.Received), GuildID: in.GuildID,
			InteractionID: in.ID, Locale: userLocale, GuildLocale: guildLocale},
		InsertOpts: &river.InsertOpts{Queue: string(work.Interactive)},
	})
	if err != nil {
		return nil, err
	}
	return interaction.Deferred(true), nil
}

type reportWorker struct {
	river.WorkerDefaults[reportArgs]
	db        *pgxpool.Pool
	followups *followup.Sender
	catalog   *i18n.Catalog
}

// Work counts the guild's jobs the way StateOf names them and sends the
// summary as the interaction's follow-up.
func (w *reportWorker) Work(ctx context.Context, j *river.Job[reportArgs]) error {
	var c struct{ Queued, Running, Waiting, Failed int64 }
	err := w.db.QueryRow(ctx, `SELECT
		count(*) FILTER (WHERE state IN ('available', 'pending')),
		count(*) FILTER (WHERE state = 'running'),
		count(*) FILTER (WHERE state IN ('scheduled', 'retryable')),
		count(*) FILTER (WHERE state = 'discarded' OR (state = 'cancelled'
			AND metadata->'output'->>'reason' IN ('needs_permission', 'target_missing', 'invalid')))
		FROM river_job WHERE metadata @> jsonb_build_object($1::text, $2::text)`, work.MetadataGuild, j.Args.GuildID).
		Scan(&c.Queued, &c.Running, &c.Waiting, &c.Failed)
	if err != nil {
		return fmt.Errorf("status: count jobs: %w", err)
	}
	loc := w.catalog.For(j.Args.Locale, j.Args.GuildLocale)
	text := loc.T("jobs.report.summary", map[string]any{"Queued": c.Queued, "Running": c.Running, "Waiting": c.Waiting, "Failed": c.Failed})
	_, err = w.followups.Send(ctx, followup.Update{Lane: work.Interactive, InteractionID: j.Args.InteractionID,
		Key: followup.JobKey(j.ID), Content: text})
	return err
}
