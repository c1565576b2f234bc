package feature

import (
	"context"
	"fmt"
	"sync"

	"github.com/herald-bot/herald/internal/i18n"
)

// Report is what one feature says about a guild in /herald status: its
// objects that are not as saved — pending, waiting, failed with the fix —
// one line each, in the admin's language. Nothing to say is no lines.
type Report func(ctx context.Context, guildID string, loc *i18n.Localizer) ([]string, error)

// Reports collects the features' reports; the admin view reads them all.
type Reports struct {
	mu      sync.Mutex
	names   []string
	reports []Report
}

// Add registers a feature's report under its name.
func (r *Reports) Add(name string, rep Report) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.names = append(r.names, name)
	r.reports = append(r.reports, rep)
}

// Collect runs every report for guildID, in registration order.
func (r *Reports) Collect(ctx context.Context, guildID string, loc *i18n.Localizer) ([]string, error) {
	r.mu.Lock()
	names, reports := r.names, r.reports
	r.mu.Unlock()
	var lines []string
	for i, rep := range reports {
		got, err := rep(ctx, guildID, loc)
		if err != nil {
			return nil, fmt.Errorf("feature %s: report: %w", names[i], err)
		}
		lines = append(lines, got...)
	}
	return lines, nil
}
