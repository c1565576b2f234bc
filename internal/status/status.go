// Package status is herald's admin view of its own work: /herald jobs
// shows, to members who may manage the server, how much work is queued,
// running, waiting for Discord and failed.
package status

import (
	"context"
	"fmt"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/herald-bot/herald/commands"
	"github.com/herald-bot/herald/internal/discord/transport"
	"github.com/herald-bot/herald/internal/followup"
	"github.com/herald-bot/herald/internal/gateway"
	"github.com/herald-bot/herald/internal/i18n"
	"github.com/herald-bot/herald/internal/work"
)

// routeVersion is the version of /herald jobs' handling, part of its
// idempotency key.
const routeVersion = 1

// Deps is what the feature needs.
type Deps struct {
	DB        *pgxpool.Pool
	Followups *followup.Sender
	Catalog   *i18n.Catalog
}

// Register routes /herald and adds the report job.
func Register(router *gateway.Router, reg *work.Registry, d Deps) {
	router.Command(commands.Herald, handle)
	work.Register(reg, &reportWorker{d: d})
}

// reportArgs is the job /herald jobs enqueues: a view, useless once the
// interaction's token has expired.
type reportArgs struct {
	work.View
	InteractionID string `json:"interaction_id"`
	Token         string `json:"token"`
	Locale        string `json:"locale"`
	GuildLocale   string `json:"guild_locale"`
}

func (reportArgs) Kind() string { return "status_jobs_report" }

// tokenLife is how long an interaction token stays usable (15 min), less
// a margin for the follow-up itself.
const tokenLife = 14 * time.Minute

// handle is the fast path of /herald: check the member may manage the
// server (Discord hides the command by default_member_permissions, but a
// server can override that), enqueue the report, answer deferred and
// ephemeral.
func handle(ctx context.Context, in *gateway.Interaction) (*discordgo.InteractionResponse, error) {
	data := in.ApplicationCommandData()
	if len(data.Options) != 1 || data.Options[0].Name != commands.Jobs {
		return ephemeral(in.Localizer.T("interaction.outdated", nil)), nil
	}
	if in.Member == nil || in.Member.Permissions&(commands.ManageGuild|discordgo.PermissionAdministrator) == 0 {
		perm := in.Localizer.T("jobs.report.permission_manage_guild", nil)
		return ephemeral(in.Localizer.T("interaction.not_allowed", map[string]any{"Permission": perm})), nil
	}
	userLocale, guildLocale := in.Locales()
	err := in.Enqueue(ctx, routeVersion, work.IntentView, river.InsertManyParams{
		Args: reportArgs{View: work.View{DeadlineAt: in.Received.Add(tokenLife)}, InteractionID: in.ID, Token: in.Token,
			Locale: userLocale, GuildLocale: guildLocale},
		InsertOpts: &river.InsertOpts{Queue: string(work.Interactive)},
	})
	if err != nil {
		return nil, err
	}
	return &discordgo.InteractionResponse{Type: discordgo.InteractionResponseDeferredChannelMessageWithSource,
		Data: &discordgo.InteractionResponseData{Flags: discordgo.MessageFlagsEphemeral}}, nil
}

func ephemeral(content string) *discordgo.InteractionResponse {
	return &discordgo.InteractionResponse{Type: discordgo.InteractionResponseChannelMessageWithSource,
		Data: &discordgo.InteractionResponseData{Content: content, Flags: discordgo.MessageFlagsEphemeral}}
}

type reportWorker struct {
	river.WorkerDefaults[reportArgs]
	d Deps
}

// Work counts herald's jobs the way StateOf names them and sends the
// summary as the interaction's follow-up.
func (w *reportWorker) Work(ctx context.Context, j *river.Job[reportArgs]) error {
	var c struct{ Queued, Running, Waiting, Failed int64 }
	err := w.d.DB.QueryRow(ctx, `SELECT
		count(*) FILTER (WHERE state IN ('available', 'pending')),
		count(*) FILTER (WHERE state = 'running'),
		count(*) FILTER (WHERE state IN ('scheduled', 'retryable')),
		count(*) FILTER (WHERE state = 'discarded' OR (state = 'cancelled'
			AND metadata->'output'->>'reason' IN ('needs_permission', 'target_missing', 'invalid')))
		FROM river_job`).Scan(&c.Queued, &c.Running, &c.Waiting, &c.Failed)
	if err != nil {
		return fmt.Errorf("status: count jobs: %w", err)
	}
	loc := w.d.Catalog.For(j.Args.Locale, j.Args.GuildLocale)
	text := loc.T("jobs.report.summary", map[string]any{"Queued": c.Queued, "Running": c.Running, "Waiting": c.Waiting, "Failed": c.Failed})
	ctx = transport.WithPriority(ctx, transport.PriorityInteractive)
	_, err = w.d.Followups.Send(ctx, work.Interactive, j.Args.InteractionID, j.Args.Token, text)
	return err
}
