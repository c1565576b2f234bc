// Package locales embeds herald's message catalogs, one TOML file per
// language, named by its language tag (en.toml, de.toml, ...).
package locales

import "embed"

// FS holds every *.toml catalog; internal/i18n loads it.
//
//go:embed *.toml
var FS embed.FS
