// Package feature is the contract between herald and its features (role
// menus, tickets, the webhook proxy, the admin views). A feature is one
// package that declares a Feature — its commands, settings, routes, jobs
// and services (a server on a port of its own) — and one line in
// internal/app's list; `herald run`, `register-commands`, `bench` and the
// test harness all build herald from that list the same way.
//
// What a new feature needs today, each checked by a test where noted:
//
//   - its package under internal/, whose Feature() returns the Feature,
//     and a row in README.md's package table;
//   - its commands in a file of commands/, the catalog Discord shows,
//     returned by Feature.Commands; Mux.Check stops start-up on a
//     command without a route or a route without a command;
//   - its messages in a section of each of locales/*.toml, the same keys
//     in every language (checked), among them a label <name>.jobs.<kind>
//     for each job kind it registers through Kit.Jobs (checked in every
//     language: TestEveryJobKindHasALabel);
//   - its tables in a numbered goose file of migrations/;
//   - the line in internal/app's list of features.
//
// A command answered by a job that renders a report is a followup view
// (followup.Later, followup.RegisterView); a job that answers the
// interaction after its work embeds followup.Reply.
package feature

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/bwmarrin/discordgo"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/herald-bot/herald/commands"
	"github.com/herald-bot/herald/internal/bulk"
	"github.com/herald-bot/herald/internal/config"
	"github.com/herald-bot/herald/internal/discord/intents"
	"github.com/herald-bot/herald/internal/discord/rest"
	"github.com/herald-bot/herald/internal/discord/transport"
	"github.com/herald-bot/herald/internal/followup"
	"github.com/herald-bot/herald/internal/gateway"
	"github.com/herald-bot/herald/internal/guildroles"
	"github.com/herald-bot/herald/internal/i18n"
	"github.com/herald-bot/herald/internal/interaction"
	"github.com/herald-bot/herald/internal/work"
)

// Feature declares one feature.
type Feature struct {
	// Name is the feature's name in logs and errors.
	Name string
	// Commands returns the feature's entries in the commands/ catalog,
	// localized from c (nil: none).
	Commands func(c *i18n.Catalog) []*discordgo.ApplicationCommand
	// Settings are the environment variables the feature reads; herald
	// validates them with its own; the feature reads each with its Get.
	Settings []config.Declared
	// Build registers the feature's routes (Kit.Routes), job workers and
	// periodic jobs (Kit.Jobs) with the pieces it needs from k.
	Build func(k Kit) error
	// Needs are the privileged intents parts of the feature depend on:
	// herald runs without them, warns at start and names in /herald status
	// what each missing one turns off.
	Needs []Need
	// Permissions are the permission bits the feature's Discord calls need
	// in a server; `herald invite` asks for the union of every feature's.
	Permissions int64
}

// Need is a privileged intent part of a feature depends on.
type Need struct {
	Intent intents.Privileged
	// Without is the locale key of what stops working without it, a
	// phrase such as "auto-close when the opener leaves".
	Without string
}

// Kit is what a feature is built with: herald's shared pieces, and the
// router and job registry it adds to.
type Kit struct {
	Config config.Config
	// Application is herald's application as Discord reported it at start:
	// its id, its bot user's id and the privileged intents it has.
	Application rest.Application
	// Missing are the needs of every feature that the application's
	// intents do not meet.
	Missing []Need
	DB      *pgxpool.Pool
	// Discord is the one REST client; every Discord call goes through it.
	Discord *rest.Client
	// Followups sends an interaction's follow-ups within its message budget.
	Followups *followup.Sender
	Catalog   *i18n.Catalog
	Log       *slog.Logger
	Metrics   prometheus.Registerer
	Routes    *interaction.Mux
	Jobs      *work.Registry
	// Insert inserts jobs from outside a job (a service's handler); a
	// job inserts through river.ClientFromContext. Both are herald's one
	// River client, bound before anything runs.
	Insert *work.Inserter
	// Roles reads guilds' roles, shared by every feature within a short
	// window; Events takes handlers of gateway events.
	Roles  *guildroles.Reader
	Events *gateway.Events
	// Services takes the feature's long-running parts (a server on a port
	// of its own), run from herald's start to its graceful stop.
	Services *Services
	// Reports takes what a feature says in /herald status; Health is the
	// REST engine's health (global gate, open circuits, invalid budget).
	Reports *Reports
	Health  func() transport.Health
	// Bulk runs actions that fan out into many tasks (a role to many
	// members, a republish of every menu) with one progress message and
	// a Cancel button; features add their kinds to it.
	Bulk *bulk.Actions
}

// Commands merges the features' declarations into the list Discord gets.
func Commands(c *i18n.Catalog, fs ...Feature) ([]*discordgo.ApplicationCommand, error) {
	var decls [][]*discordgo.ApplicationCommand
	for _, f := range fs {
		if f.Commands != nil {
			decls = append(decls, f.Commands(c))
		}
	}
	return commands.Merge(decls...)
}

// Settings lists the features' settings, for config.Load.
func Settings(fs ...Feature) []config.Declared {
	var out []config.Declared
	for _, f := range fs {
		out = append(out, f.Settings...)
	}
	return out
}

// Build builds every feature into k, then checks that each declared
// command and autocomplete option has a route and each such route a
// declaration, so a mismatch stops herald at start-up instead of
// answering members "outdated".
func Build(k Kit, fs ...Feature) error {
	seen := map[string]bool{}
	for _, f := range fs {
		if f.Name == "" || seen[f.Name] {
			return fmt.Errorf("feature: %q: a feature needs a name of its own", f.Name)
		}
		seen[f.Name] = true
		if f.Build == nil {
			return fmt.Errorf("feature %s: no Build", f.Name)
		}
		if err := f.Build(k.with(f.Name)); err != nil {
			return fmt.Errorf("feature %s: %w", f.Name, err)
		}
	}
	declared, err := Commands(k.Catalog, fs...)
	if err != nil {
		return err
	}
	if err := k.Routes.Check(interaction.Declared{Commands: commands.Paths(declared), Autocomplete: commands.Completing(declared)}); err != nil {
		return errors.Join(errors.New("feature: routes do not match the declared commands"), err)
	}
	return nil
}

// with gives a feature a logger that names it and a view of the job
// registry whose kinds its own locale section labels.
func (k Kit) with(name string) Kit {
	k.Log = k.Log.With("feature", name)
	k.Jobs = k.Jobs.Section(name)
	return k
}
