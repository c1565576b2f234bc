// Package migrations holds herald's own SQL migrations (goose format),
// embedded into the binary. River's schema is applied separately through
// rivermigrate; see internal/store.
package migrations

import "embed"

// FS holds every migration file, applied in version order.
//
//go:embed *.sql
var FS embed.FS
