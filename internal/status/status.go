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
	return feature.Feature{Name: "status", Commands: commands.Herald, Settings: []config.Declared{boardInterval}, Build: build,
		// The /herald board message.
		Permissions: discordgo.PermissionViewChannel | discordgo.PermissionSendMessages}
}

func build(k feature.Kit) error {
	k.Routes.Route("/herald", func(r *interaction.Mux) {
		r.Use(interaction.GuildOnly, interaction.RequirePermission(discordgo.PermissionManageGuild), interaction.Cooldown(cooldown))
		r.Command("/jobs", followup.Later[jobsView])
		r.Command("/status", followup.Later[statusView])
		r.Command("/board", board)
	})
	followup.RegisterView[jobsView](k.Jobs, k.Followups, k.Catalog, jobCounts{k.DB}.text)
	sum := summary{db: k.DB, reports: k.Reports, jobs: k.Jobs, health: k.Health, missing: k.Missing}
	followup.RegisterView[statusView](k.Jobs, k.Followups, k.Catalog, sum.text)
	work.Register(k.Jobs, &boardWorker{summary: sum, discord: k.Discord, catalog: k.Catalog, interval: boardInterval.Get(k.Config)})
	return nil
}

// jobsView is /herald jobs (followup.View).
type jobsView struct{}

func (jobsView) Kind() string { return "status_jobs_report" }

// cooldown is how often one admin may ask for a report: each counts the
// guild's jobs in Postgres.
const cooldown = 10 * time.Second

// jobCounts is /herald jobs: the guild's jobs counted the way StateOf
// names them.
type jobCounts struct{ db *pgxpool.Pool }

func (j jobCounts) text(ctx context.Context, guildID string, loc *i18n.Localizer) (string, error) {
	var c struct{ Queued, Running, Waiting, Failed int64 }
	err := j.db.QueryRow(ctx, `SELECT
		count(*) FILTER (WHERE state IN ('available', 'pending')),
		count(*) FILTER (WHERE state = 'running'),
		count(*) FILTER (WHERE state IN ('scheduled', 'retryable')),
		count(*) FILTER (WHERE state = 'discarded' OR (state = 'cancelled'
			AND metadata->'output'->>'reason' IN ('needs_permission', 'target_missing', 'invalid')))
		FROM river_job WHERE metadata @> jsonb_build_object($1::text, $2::text)`, work.MetadataGuild, guildID).
		Scan(&c.Queued, &c.Running, &c.Waiting, &c.Failed)
	if err != nil {
		return "", fmt.Errorf("status: count jobs: %w", err)
	}
	return loc.T("jobs.report.summary", map[string]any{"Queued": c.Queued, "Running": c.Running, "Waiting": c.Waiting, "Failed": c.Failed}), nil
}
