package webhookproxy

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/herald-bot/herald/commands"
	"github.com/herald-bot/herald/internal/i18n"
)

// declare adds /herald proxy to herald's admin command.
func declare(c *i18n.Catalog) []*discordgo.ApplicationCommand {
	b := commands.NewBuilder(c)
	return []*discordgo.ApplicationCommand{
		b.Command("herald", discordgo.PermissionManageGuild, b.Sub("herald proxy")),
	}
}

// cooldown is how often one admin may ask: each report reads every target.
const cooldown = 10 * time.Second

// maxListed is how many targets one report lists; the rest are counted.
const maxListed = 10

// reportView is /herald proxy (followup.View).
type reportView struct{}

func (reportView) Kind() string { return "webhookproxy_report" }

// report shows what GET /proxy/targets shows: per webhook (by id, never
// its token), the depth, the oldest pending delivery's age, and whether
// it waits or is dead; plus the dead-letter count. The proxy's targets
// are the bot's, not a guild's.
type report struct {
	db *pgxpool.Pool
	on bool
}

func (w report) text(ctx context.Context, _ string, loc *i18n.Localizer) (string, error) {
	if !w.on {
		return loc.T("webhookproxy.report.off", nil), nil
	}
	ts, err := targets(ctx, w.db, "")
	if err != nil {
		return "", fmt.Errorf("webhookproxy: report: %w", err)
	}
	var dead int64
	if err := w.db.QueryRow(ctx, `SELECT count(*) FROM webhookproxy_deliveries WHERE state = 'dead'`).Scan(&dead); err != nil {
		return "", fmt.Errorf("webhookproxy: report: %w", err)
	}
	var b strings.Builder
	b.WriteString(loc.T("webhookproxy.report.summary", map[string]any{"Targets": len(ts), "DeadLetters": dead}))
	for i, t := range ts {
		if i == maxListed {
			b.WriteString("\n" + loc.T("webhookproxy.report.more", map[string]any{"Count": len(ts) - maxListed}))
			break
		}
		b.WriteString("\n" + line(loc, t))
	}
	return b.String(), nil
}

func line(loc *i18n.Localizer, t targetStatus) string {
	name := t.WebhookID
	if t.ThreadID != "" {
		name += " / " + t.ThreadID
	}
	vars := map[string]any{"Target": name, "Depth": t.Depth}
	switch {
	case t.Dead:
		return loc.T("webhookproxy.report.dead", vars)
	case t.WaitingUntil != nil:
		vars["Until"] = fmt.Sprintf("<t:%d:T>", t.WaitingUntil.Unix())
		vars["Reason"] = loc.T("webhookproxy.wait."+t.WaitReason, nil)
		return loc.T("webhookproxy.report.waiting", vars)
	case t.OldestPending != nil:
		vars["Age"] = time.Since(*t.OldestPending).Round(time.Second).String()
		return loc.T("webhookproxy.report.pending", vars)
	default:
		return loc.T("webhookproxy.report.idle", vars)
	}
}

// backedUp is how old a target's oldest pending delivery may get before
// /herald status names the target.
const backedUp = time.Minute

// guildReport is the proxy's part of /herald status: the guild's targets
// that are dead, waiting for Discord, or backed up.
func guildReport(db *pgxpool.Pool) func(ctx context.Context, guildID string, loc *i18n.Localizer) ([]string, error) {
	return func(ctx context.Context, guildID string, loc *i18n.Localizer) ([]string, error) {
		ts, err := targets(ctx, db, guildID)
		if err != nil {
			return nil, fmt.Errorf("webhookproxy: report: %w", err)
		}
		var lines []string
		for _, t := range ts {
			if t.Dead || t.WaitingUntil != nil || (t.OldestPending != nil && time.Since(*t.OldestPending) > backedUp) {
				lines = append(lines, loc.T("webhookproxy.report.in_channel", map[string]any{"Channel": "<#" + t.ChannelID + ">", "Line": line(loc, t)}))
			}
		}
		return lines, nil
	}
}
